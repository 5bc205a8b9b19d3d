#include "workloads/model_counts.h"
#include "workloads/registry.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include <nlohmann/json.hpp>
#include <torch/version.h>

namespace trainbench {
namespace {

// The running binary, by size and modification time: a rebuilt trainbench (a changed model) recounts.
std::string binary_identity() {
  struct stat st {};
  if (stat("/proc/self/exe", &st) != 0) return "unknown";
  return std::to_string(static_cast<long long>(st.st_size)) + "@" +
         std::to_string(static_cast<long long>(st.st_mtime)) + "." +
         std::to_string(static_cast<long long>(st.st_mtim.tv_nsec));
}

std::string key_of(const WorkloadInfo& w, const Params& params) {
  std::string key = w.name;
  for (const auto& [k, v] : params) key += ":" + k + "=" + v;  // a std::map: sorted, so one key per setting
  return key;
}

}  // namespace

ModelCounts count_whole(const WorkloadInfo& w, const Params& params) {
  WorkloadOptions o;
  o.model = w.name;
  o.params = params;
  o.batch = 1;
  const auto built = make_workload(o);
  const StepFlops f = built->step_flops();
  return {built->parameters(), f.forward, f.training()};
}

ModelCounts count_by_depth(const ModelCounts& one, const ModelCounts& two, int64_t depth) {
  const double more = static_cast<double>(depth - 1);
  return {one.parameters + (depth - 1) * (two.parameters - one.parameters),
          one.forward_flops + more * (two.forward_flops - one.forward_flops),
          one.training_flops + more * (two.training_flops - one.training_flops)};
}

ModelCounts count_model(const WorkloadInfo& w, const Params& params) {
  const int64_t depth = w.depth ? w.depth(params) : 0;
  if (depth <= 2) return count_whole(w, params);
  Params one = params, two = params;
  one["layers"] = "1";
  two["layers"] = "2";
  return count_by_depth(count_whole(w, one), count_whole(w, two), depth);
}

std::filesystem::path counts_cache_dir() {
  if (const char* d = std::getenv("TRAINBENCH_CACHE_DIR"); d != nullptr && *d != '\0') return d;
  if (const char* d = std::getenv("XDG_CACHE_HOME"); d != nullptr && *d != '\0') {
    return std::filesystem::path(d) / "trainbench";
  }
  if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0') {
    return std::filesystem::path(h) / ".cache" / "trainbench";
  }
  return {};
}

CountsCache::CountsCache(std::filesystem::path dir) : dir_(std::move(dir)) {
  stamp_ = std::string("libtorch ") + TORCH_VERSION + ", binary " + binary_identity();
  if (dir_.empty()) return;
  try {
    std::ifstream in(dir_ / "counts.json");
    if (!in) return;
    const auto j = nlohmann::json::parse(in);
    if (j.value("stamp", "") != stamp_) return;  // another build or LibTorch: count again
    for (const auto& e : j.at("entries")) {
      entries_.push_back({e.at("key").get<std::string>(),
                          {e.at("parameters").get<int64_t>(), e.at("forward_flops").get<double>(),
                           e.at("training_flops").get<double>()}});
    }
  } catch (const std::exception&) {
    entries_.clear();  // unreadable: count again
  }
}

ModelCounts CountsCache::get(const WorkloadInfo& w, const Params& params) {
  const std::string key = key_of(w, params);
  for (const auto& e : entries_) {
    if (e.key == key) return e.counts;
  }
  const ModelCounts counts = count_model(w, params);
  entries_.push_back({key, counts});
  dirty_ = true;
  return counts;
}

void CountsCache::save() const {
  if (!dirty_ || dir_.empty()) return;
  try {
    nlohmann::json j;
    j["stamp"] = stamp_;
    j["entries"] = nlohmann::json::array();
    for (const auto& e : entries_) {
      j["entries"].push_back({{"key", e.key},
                              {"parameters", e.counts.parameters},
                              {"forward_flops", e.counts.forward_flops},
                              {"training_flops", e.counts.training_flops}});
    }
    std::filesystem::create_directories(dir_);
    const auto tmp = dir_ / ("counts.json.tmp." + std::to_string(getpid()));
    {
      std::ofstream out(tmp);
      out << j.dump(1) << "\n";
      if (!out) return;
    }
    std::filesystem::rename(tmp, dir_ / "counts.json");
  } catch (const std::exception&) {}
}

}  // namespace trainbench
