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

// Whether the text names a GPU kind; false for cpu and for text that names no kind.
bool is_gpu_device_text(const std::string& device_text);
// Whether the text names the CPU ("cpu").
bool is_cpu_device_text(const std::string& device_text);

}  // namespace trainbench
