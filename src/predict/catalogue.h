// The device catalogue (src/predict/devices.csv, compiled in; `--catalogue FILE` reads another): one
// row per card with its public source. `trainbench devices` lists it; `trainbench predict --on ID`
// names its rows. Torch-free.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace trainbench::predict {

struct DeviceSpec {
  std::string id;             // short id: lower-case letters, digits and '-' ("h100-sxm")
  std::string name;           // "H100 SXM5 80GB"
  std::string vendor;         // nvidia | amd
  std::string architecture;   // "hopper"
  int64_t compute_units = 0;  // SMs (NVIDIA) or CUs (AMD)
  double boost_mhz = 0.0;
  double memory_gb = 0.0;    // the vendor's figure (GiB)
  double memory_gbps = 0.0;  // GB/s
  double l2_mb = 0.0;
  double fp32_tflops = 0.0;  // dense; every row has it
  // Dense tensor-core (matrix-core) peaks; nullopt where the card has none.
  std::optional<double> tf32_tflops, bf16_tflops, fp16_tflops;
  double host_link_gbps = 0.0;
  std::optional<double> gpu_link_gbps;  // nullopt: no GPU-to-GPU link
  double tdp_w = 0.0;
  std::string source;  // the public document every figure of the row comes from

  // The memory a program sees (docs/prediction.md): the vendor's GiB less what the driver keeps, by
  // the one card measured (an H100 80GB shows 85,017,493,504 bytes of 80 GiB: 0.98973).
  int64_t visible_memory_bytes() const;
};

// The ratio visible_memory_bytes applies, measured on one H100 80GB (examples/h100/quick.json's
// context: device_memory_bytes 85017493504 / 80 GiB).
constexpr double kVisibleMemoryShare = 85017493504.0 / (80.0 * 1073741824.0);

// The catalogue's columns, in file order.
const std::vector<std::string>& catalogue_columns();

// Parses catalogue text (`origin` names it in errors: a file's path, or "the built-in catalogue").
// Lines starting with '#' and blank lines are comments. Throws InputError with one line naming the
// origin, the line and the column of the first problem: a header other than catalogue_columns(), a
// missing or extra cell, an id that is not [a-z0-9-]+ or repeats, a number that is not positive and
// finite, a missing figure other than tf32/bf16/fp16/gpu_link, a row without a source.
std::vector<DeviceSpec> parse_catalogue(const std::string& text, const std::string& origin);

// The compiled-in catalogue (src/predict/devices.csv), parsed once.
const std::vector<DeviceSpec>& builtin_catalogue();

// `--catalogue FILE` (read and parsed; InputError on any problem) or the built-in one for "".
std::vector<DeviceSpec> load_catalogue(const std::string& path);

// The rows `ids` names ("all": every row), in the order given. An unknown id throws InputError with one
// line naming the closest ids ("unknown device 'h100'; closest: h100-sxm, h100-pcie, h200; `trainbench
// devices` lists them"). A repeated id is refused too.
// `flag` names where the ids came from in that line.
std::vector<DeviceSpec> select_devices(const std::vector<DeviceSpec>& catalogue, const std::vector<std::string>& ids,
                                       const std::string& flag = "--on");

nlohmann::json to_json(const DeviceSpec& d);

}  // namespace trainbench::predict
