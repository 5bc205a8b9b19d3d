#include "core/precision.h"

#include <stdexcept>

namespace trainbench {

c10::ScalarType torch_dtype(const Precision& p) {
  if (p.type == "fp16") return c10::kHalf;
  if (p.type == "bf16") return c10::kBFloat16;
  if (p.type == "fp32") return c10::kFloat;
  throw std::logic_error("precision type '" + p.type + "' has no dtype");  // a table row without its dtype here
}

}  // namespace trainbench
