#include "core/device_text.h"

#include <algorithm>

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

std::string device_text_problem(const std::string& device_text) {
  const DeviceTextKind* k = kind_of(device_text);
  const size_t colon = device_text.find(':');
  std::string kinds;
  for (const auto& kind : device_text_kinds()) kinds += std::string(kinds.empty() ? "" : ", ") + kind.name;
  const std::string shown = device_text.size() > 40 ? device_text.substr(0, 40) + "..." : device_text;
  if (k == nullptr) return "'" + shown + "' is no device (the kinds: " + kinds + ")";
  if (colon == std::string::npos) return "";
  const std::string index = device_text.substr(colon + 1);
  const bool digits = !index.empty() && index.size() <= 4 &&
                      std::all_of(index.begin(), index.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
                      (index == "0" || index[0] != '0');
  if (!k->indexed || !digits) return "'" + shown + "' is no device (a kind, or an indexed kind and :N)";
  return "";
}

std::string context_device_problem(const std::string& context_device) {
  for (size_t from = 0; from <= context_device.size();) {
    const size_t end = std::min(context_device.find(',', from), context_device.size());
    const std::string why = device_text_problem(context_device.substr(from, end - from));
    if (!why.empty()) return why;
    from = end + 1;
  }
  return "";
}

std::string recorded_device_problem(const std::string& device_text) {
  return device_text.empty() ? "" : device_text_problem(device_text);
}

std::string recorded_devices_problem(const std::string& context_device) {
  return context_device.empty() ? "" : context_device_problem(context_device);
}

std::string canonical_device_text(const std::string& device_text) {
  const DeviceTextKind* k = kind_of(device_text);
  if (k != nullptr && k->indexed && device_text.find(':') == std::string::npos) return device_text + ":0";
  return device_text;
}

std::vector<std::string> context_devices(const std::string& context_device) {
  std::vector<std::string> out;
  for (size_t from = 0; from <= context_device.size();) {
    const size_t end = std::min(context_device.find(',', from), context_device.size());
    const std::string one = canonical_device_text(context_device.substr(from, end - from));
    if (!one.empty() && std::find(out.begin(), out.end(), one) == out.end()) out.push_back(one);
    from = end + 1;
  }
  return out;
}

}  // namespace trainbench
