// The workload descriptions, without LibTorch: every name `--model` accepts (the CNN zoo, the study's
// other workloads: ablation convnet, biLSTM, BERT; gpt, llama, script) with its family, unit, default
// batch, parameters and their rules. What reads results (compare, report, board) needs nothing more;
// workloads/registry.h builds each one.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace trainbench {

namespace data {
// What --data a workload trains on besides synthetic: an ImageFolder of JPEGs, a token file, or none
// (data/source_check.h checks a source against it).
enum class DataKind { none, images, tokens };
}  // namespace data

using Params = std::map<std::string, std::string>;

// One `--set key=value` parameter of a workload.
struct ParamSpec {
  std::string key;
  std::string default_value;
  std::string help;  // one line, with the allowed values or range
  // Throws std::invalid_argument (one line) for a value this workload cannot take.
  std::function<void(const std::string& value)> check;
  // True for a choice of kernel that computes the same thing another way (bert's and gpt's `attention`):
  // compare pairs cases across it (a 1.13 run's math with a 2.x run's sdpa), unless that makes two
  // cases of one file collide. Its default may differ between LibTorch builds.
  bool kernel_choice = false;
};

// A workload whose cases are variants of one design, compared side by side (the convnet ablation): the
// HTML report draws one bar per variant, from this entry alone.
struct AblationInfo {
  std::string param;                  // the parameter whose value names the variant
  std::vector<std::string> variants;  // its values, in the order the bars are drawn
  std::string title;                  // the report section's heading
};

struct WorkloadInfo {
  std::string name;
  std::string family;  // cnn | ablation | lstm | transformer
  std::string unit;    // throughput unit: images/s, sequences/s
  std::string input;   // one sample, for `trainbench list`: "3x224x224", "seq 200"
  int64_t default_batch = 32;
  std::string description;
  std::vector<ParamSpec> params;
  // What --data the workload trains on besides synthetic: an ImageFolder of JPEGs, a token file (the
  // workload's `vocab` parameter bounds the ids), or none (synthetic only).
  data::DataKind data_kind = data::DataKind::none;
  // Checks across parameters (bert: heads divide hidden, seq at most max_pos), given every parameter with
  // the defaults filled in; throws std::invalid_argument (one line). Run by canonical_params, so a plan
  // refuses such a case before anything runs. (A check that needs LibTorch, as loading a TorchScript
  // file, is the workload's builder's: workloads/registry.h, check_params.)
  std::function<void(const Params& all)> check_together;
  // Set for an ablation workload (family "ablation"); unset for every other.
  std::optional<AblationInfo> ablation;
  // For a workload built of `layers` blocks alike but for the first (every parameter given, defaults
  // filled in): how many blocks these parameters build (a size's or config's where layers is 0).
  // `trainbench list` counts such a model at one and two blocks and extrapolates (workloads/model_counts.h).
  std::function<int64_t(const Params& all)> depth;
};

const std::vector<WorkloadInfo>& all_workloads();

// The families of WorkloadInfo::family, in the order comparisons list them, with the title they print.
struct FamilyInfo {
  std::string name;   // cnn | ablation | lstm | transformer
  std::string title;  // "CNNs", "ablation", "LSTM", "Transformer"
};
const std::vector<FamilyInfo>& workload_families();
const WorkloadInfo* find_workload(const std::string& name);
// True when `name` names a workload.
bool is_known_model(const std::string& name);

// Checks `given` against the workload's parameters and returns them without the ones equal to their
// default (the canonical form a descriptor prints). Throws std::invalid_argument naming the bad key
// or value in one line.
Params canonical_params(const WorkloadInfo& w, const Params& given);
// Every parameter of the workload: `given` over the defaults.
Params effective_params(const WorkloadInfo& w, const Params& given);

// Value checks for ParamSpec::check.
std::function<void(const std::string&)> int_in_range(int64_t lo, int64_t hi);
std::function<void(const std::string&)> one_of(std::vector<std::string> values);

// Parameter helpers for workload constructors (the values were checked already).
int64_t param_int(const Params& p, const std::string& key);
const std::string& param_str(const Params& p, const std::string& key);

}  // namespace trainbench
