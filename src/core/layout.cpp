#include "core/layout.h"

#include <algorithm>
#include <stdexcept>

namespace trainbench {

const std::vector<std::string>& layout_names() {
  static const std::vector<std::string> v = {"nchw", "nhwc"};
  return v;
}

bool is_layout(const std::string& text) {
  const auto& n = layout_names();
  return std::find(n.begin(), n.end(), text) != n.end();
}

Layout parse_layout(const std::string& text) {
  if (text == "nchw") return Layout::nchw;
  if (text == "nhwc") return Layout::nhwc;
  throw std::invalid_argument("unknown layout '" + text + "' (nchw, nhwc)");
}

const char* to_string(Layout l) { return l == Layout::nhwc ? "nhwc" : "nchw"; }

}  // namespace trainbench
