// A device as results files and contexts write it ("cpu", "cuda:0"): the device types by name, and what
// code that reads results asks of such text, without LibTorch. core/device.h gives each type its
// LibTorch hooks.
#pragma once
#include <string>
#include <vector>

namespace trainbench {

struct DeviceTextKind {
  const char* name;  // "cpu", "cuda": the text of --device, descriptors and records
  bool gpu;          // its own memory behind a caching allocator; kernels run asynchronously
  bool indexed;      // "name:N" picks one of several
};

// Every device type by name, the CPU first: a new type (xpu, mps) is one row here and its hooks in
// core/device.cpp.
const std::vector<DeviceTextKind>& device_text_kinds();
// The row whose name the text starts with ("cuda:0" -> cuda), nullptr when none.
const DeviceTextKind* device_text_kind_of(const std::string& device_text);

// Whether the text names a GPU kind; false for cpu and for text that names no kind.
bool is_gpu_device_text(const std::string& device_text);
// Whether the text names the CPU ("cpu").
bool is_cpu_device_text(const std::string& device_text);

// "" when the text names one device of a known kind ("cpu", "cuda", "cuda:3"), else why not.
std::string device_text_problem(const std::string& device_text);
// "" when a context's device is one or several such devices, comma-separated; else why not.
std::string context_device_problem(const std::string& context_device);

// The same for a results file's record and context, where empty means not recorded.
std::string recorded_device_problem(const std::string& device_text);
std::string recorded_devices_problem(const std::string& context_device);

// One device as a case holds it: a kind's name and, for an indexed kind, which one. core/device.h gives
// it its LibTorch hooks (torch_device, device_kind).
struct DeviceSpec {
  std::string type = "cpu";  // a kind's name: "cpu" | "cuda" (ROCm builds also call their GPUs "cuda")
  int index = -1;            // -1: the default device of that type

  std::string str() const;  // "cpu", "cuda", "cuda:1"
  bool is_gpu() const;
  bool operator==(const DeviceSpec& o) const { return type == o.type && index == o.index; }
};

// "cpu, cuda or cuda:N": the device texts parse_device takes, for messages and help.
std::string device_choices();
// Device `index` of the first GPU kind in the table ("cuda").
DeviceSpec gpu_device(int index);
// Throws std::invalid_argument naming the bad value for anything but a kind's name (or name:N).
DeviceSpec parse_device(const std::string& text);

// One device, one text: an indexed kind without its index is its default device, 0 ("cuda" and
// "cuda:0" on one GPU are one device: "cuda:0"); anything else as given.
std::string canonical_device_text(const std::string& device_text);
// The devices a context's `device` names, each canonical and once: a run over `--device cpu,cuda:0`
// writes "cpu,cuda:0".
std::vector<std::string> context_devices(const std::string& context_device);

}  // namespace trainbench
