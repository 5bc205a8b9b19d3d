// A device as results files and contexts write it ("cpu", "cuda:0"): what code that reads results asks
// of it, without LibTorch (the device-kind table itself is in core/device.h).
#pragma once
#include <string>

namespace trainbench {

// Whether the text names a GPU kind; false for cpu and for text that names no kind.
bool is_gpu_device_text(const std::string& device_text);
// Whether the text names the CPU ("cpu").
bool is_cpu_device_text(const std::string& device_text);

}  // namespace trainbench
