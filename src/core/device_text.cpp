#include "core/device_text.h"

namespace trainbench {
namespace {

// The row whose name the text starts with ("cuda:0" -> cuda), nullptr when none.
const DeviceTextKind* kind_of(const std::string& device_text) {
  const std::string name = device_text.substr(0, device_text.find(':'));
  for (const auto& k : device_text_kinds())
    if (name == k.name) return &k;
  return nullptr;
}

}  // namespace

const std::vector<DeviceTextKind>& device_text_kinds() {
  static const std::vector<DeviceTextKind> t = {{"cpu", false, false}, {"cuda", true, true}};
  return t;
}

bool is_gpu_device_text(const std::string& device_text) {
  const DeviceTextKind* k = kind_of(device_text);
  return k != nullptr && k->gpu;
}

bool is_cpu_device_text(const std::string& device_text) {
  const DeviceTextKind* k = kind_of(device_text);
  return k != nullptr && !k->gpu;
}

}  // namespace trainbench
