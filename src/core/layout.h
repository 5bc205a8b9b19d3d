// A memory layout of image tensors: nchw (contiguous) or nhwc (channels-last). Descriptors, suite
// files and records carry the text; a case holds the value, parsed once (parse_layout, the one rule).
#pragma once
#include <string>
#include <vector>

namespace trainbench {

enum class Layout { nchw, nhwc };

// Every layout by its text, in the order --help lists them: nchw, nhwc.
const std::vector<std::string>& layout_names();
bool is_layout(const std::string& text);
// Throws std::invalid_argument "unknown layout 'nwhc' (nchw, nhwc)".
Layout parse_layout(const std::string& text);
const char* to_string(Layout l);
// The layout a case does not use: what `explain` tries beside it.
inline Layout other_layout(Layout l) { return l == Layout::nchw ? Layout::nhwc : Layout::nchw; }

}  // namespace trainbench
