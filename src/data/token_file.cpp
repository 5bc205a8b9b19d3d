#include "data/token_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "core/input_file.h"
#include "data/data_error.h"

namespace trainbench::data {

int token_width(const std::string& dtype) {
  if (dtype == "uint16") return 2;
  if (dtype == "uint32") return 4;
  throw DataError("--data-dtype " + dtype + ": expected uint16 or uint32");
}

TokenFile::TokenFile(const std::string& path, const std::string& dtype) : path_(path), width_(token_width(dtype)) {
  if (const std::string why = input_file_problem(path); !why.empty()) throw DataError("--data " + path + ": " + why);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw DataError("--data " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_size == 0) {
    ::close(fd);
    throw DataError("--data " + path + ": empty file (expected " + dtype + " token ids)");
  }
  bytes_ = static_cast<size_t>(st.st_size);
  if (bytes_ % width_ != 0) {
    ::close(fd);
    throw DataError("--data " + path + ": " + std::to_string(bytes_) + " bytes is not a whole number of " + dtype +
                    " tokens (is --data-dtype right?)");
  }
  tokens_ = static_cast<int64_t>(bytes_ / width_);
  base_ = ::mmap(nullptr, bytes_, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (base_ == MAP_FAILED) {
    base_ = nullptr;
    throw DataError("--data " + path + ": cannot map it (" + std::strerror(errno) + ")");
  }
  ::madvise(base_, bytes_, MADV_RANDOM);  // windows at random offsets: no read-ahead of whole regions
}

TokenFile::~TokenFile() {
  if (base_ != nullptr) ::munmap(base_, bytes_);
}

std::optional<TokenFile::BadToken> TokenFile::first_at_or_above(int64_t vocab) const {
  for (int64_t i = 0; i < tokens_; ++i) {
    const int64_t v = at(i);
    if (v >= vocab) return BadToken{i, v};
  }
  return std::nullopt;
}

void TokenFile::check_vocab(int64_t vocab) const {
  if (const auto bad = first_at_or_above(vocab)) {
    throw DataError("--data " + path_ + ": token id " + std::to_string(bad->value) + " at offset " +
                    std::to_string(bad->offset) + " (byte " + std::to_string(bad->offset * width_) +
                    ") is not below the model's vocabulary size " + std::to_string(vocab));
  }
}

}  // namespace trainbench::data
