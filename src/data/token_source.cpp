#include "data/token_source.h"

#include <algorithm>
#include <chrono>
#include <random>

#include "data/data_error.h"

namespace trainbench::data {

TokenWindowSource::TokenWindowSource(std::shared_ptr<const TokenFile> file, TokenSourceOptions options)
    : file_(std::move(file)), options_(options) {
  const int64_t window = options_.seq + (options_.target == TokenTarget::next_token ? 1 : 0);
  if (file_->size() < window) {
    throw DataError("--data " + file_->path() + ": " + std::to_string(file_->size()) +
                    " tokens, fewer than one window of " + std::to_string(window));
  }
  mask_id_ = options_.mask_id >= 0 ? options_.mask_id : options_.vocab > 103 ? 103 : options_.vocab - 1;
}

Batch TokenWindowSource::make(int64_t index, StageTimes& times) {
  const auto t0 = std::chrono::steady_clock::now();
  const int64_t b = options_.batch, seq = options_.seq;
  const bool next = options_.target == TokenTarget::next_token;
  const int64_t window = seq + (next ? 1 : 0);
  torch::Tensor ids = torch::empty({b, seq}, torch::kLong);
  torch::Tensor labels =
      options_.target == TokenTarget::classify ? torch::empty({b}, torch::kLong) : torch::empty({b, seq}, torch::kLong);
  int64_t* id = ids.data_ptr<int64_t>();
  int64_t* label = labels.data_ptr<int64_t>();
  // One random stream per batch index: batch i is the same whichever thread makes it.
  std::mt19937_64 rng(options_.seed * 0x9e3779b97f4a7c15ULL + static_cast<uint64_t>(index) * 0xbf58476d1ce4e5b9ULL + 1);
  std::uniform_int_distribution<int64_t> offset(0, file_->size() - window);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::uniform_int_distribution<int64_t> random_id(0, std::max<int64_t>(0, options_.vocab - 1));
  Batch out;
  for (int64_t k = 0; k < b; ++k) {
    const int64_t at = offset(rng);
    out.items.push_back(at);
    int64_t* row = id + k * seq;
    file_->read(at, seq, row);
    switch (options_.target) {
      case TokenTarget::next_token:
        // The targets are the window shifted by one: its last id is the one read past the row.
        std::copy(row + 1, row + seq, label + k * seq);
        file_->read(at + seq, 1, label + k * seq + seq - 1);
        break;
      case TokenTarget::classify:
        label[k] = row[0] % options_.classes;
        break;
      case TokenTarget::masked_lm:
        for (int64_t i = 0; i < seq; ++i) {
          int64_t& l = label[k * seq + i];
          if (u(rng) >= 0.15) {
            l = kIgnoreLabel;
            continue;
          }
          l = row[i];
          const double r = u(rng);
          if (r < 0.8) {
            row[i] = mask_id_;
          } else if (r < 0.9) {
            row[i] = random_id(rng);
          }  // else: the token stays
        }
        break;
    }
  }
  times.samples += b;
  times.bytes += b * window * file_->width();  // read from the mapping
  times.augment_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out.tensors = {ids, labels};
  return out;
}

std::shared_ptr<TokenWindowSource> open_token_source(const std::string& path, const std::string& dtype,
                                                     const TokenSourceOptions& options) {
  auto file = std::make_shared<TokenFile>(path, dtype);
  file->check_vocab(options.vocab);
  return std::make_shared<TokenWindowSource>(std::move(file), options);
}

LoaderStats TokenWindowSource::describe() const {
  LoaderStats s;
  s.kind = "tokens";
  s.source = file_->path();
  s.files = file_->size();
  s.transfer = "ids";
  return s;
}

}  // namespace trainbench::data
