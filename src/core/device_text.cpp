#include "core/device_text.h"

#include <algorithm>
#include <stdexcept>

namespace trainbench {
const DeviceTextKind* device_text_kind_of(const std::string& device_text) {
  const std::string name = device_text.substr(0, device_text.find(':'));
  for (const auto& k : device_text_kinds())
    if (name == k.name) return &k;
  return nullptr;
}

const std::vector<DeviceTextKind>& device_text_kinds() {
  static const std::vector<DeviceTextKind> t = {{"cpu", false, false}, {"cuda", true, true}};
  return t;
}

bool is_gpu_device_text(const std::string& device_text) {
  const DeviceTextKind* k = device_text_kind_of(device_text);
  return k != nullptr && k->gpu;
}

bool is_cpu_device_text(const std::string& device_text) {
  const DeviceTextKind* k = device_text_kind_of(device_text);
  return k != nullptr && !k->gpu;
}

std::string device_text_problem(const std::string& device_text) {
  const DeviceTextKind* k = device_text_kind_of(device_text);
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
  const DeviceTextKind* k = device_text_kind_of(device_text);
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

std::string DeviceSpec::str() const { return index < 0 ? type : type + ":" + std::to_string(index); }

bool DeviceSpec::is_gpu() const { return is_gpu_device_text(type); }

std::string device_choices() {
  std::vector<std::string> texts;
  for (const auto& k : device_text_kinds()) {
    texts.emplace_back(k.name);
    if (k.indexed) texts.push_back(std::string(k.name) + ":N");
  }
  std::string s;
  for (size_t i = 0; i < texts.size(); ++i) s += (i == 0 ? "" : (i + 1 == texts.size() ? " or " : ", ")) + texts[i];
  return s;
}

DeviceSpec gpu_device(int index) {
  for (const auto& k : device_text_kinds())
    if (k.gpu) return DeviceSpec{k.name, index};
  throw std::logic_error("no GPU kind in the device table");
}

DeviceSpec parse_device(const std::string& text) {
  DeviceSpec d;
  const auto colon = text.find(':');
  d.type = text.substr(0, colon);
  const DeviceTextKind* k = device_text_kind_of(d.type);
  if (k == nullptr || d.type.empty()) {
    throw std::invalid_argument("unknown device '" + text + "' (expected " + device_choices() + ")");
  }
  if (colon != std::string::npos) {
    const std::string idx = text.substr(colon + 1);
    if (!k->indexed || idx.empty() || idx.size() > 3 || idx.find_first_not_of("0123456789") != std::string::npos) {
      throw std::invalid_argument("bad device '" + text + "' (expected " + device_choices() + ")");
    }
    d.index = std::stoi(idx);
  }
  return d;
}

}  // namespace trainbench
