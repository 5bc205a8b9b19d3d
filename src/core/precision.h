// A training precision: the floating-point type a case computes in, and how it gets there.
//   fp32                   everything in fp32
//   fp16, bf16             automatic mixed precision (autocast); fp16 with dynamic loss scaling
//   fp16-pure, bf16-pure   the whole model, its buffers and its float inputs in that type
// Cases, descriptors and records carry the text; code that acts on a precision parses it here, once,
// and asks the value (`dtype`, `pure`, `loss_scaling`) instead of comparing strings.
#pragma once
#include <c10/core/ScalarType.h>

#include <string>
#include <vector>

#include "core/precision_text.h"  // the table of names, and the type each computes in

namespace trainbench {

struct Precision {
  c10::ScalarType dtype = c10::kFloat;  // the type the model's layers compute in
  bool pure = false;                    // parameters, buffers and inputs in `dtype`; else autocast
  // fp16's narrow range needs loss scaling under autocast; bf16 has fp32's range and needs none. The
  // pure types run without it: they measure the speed of the type, not a training recipe.
  bool loss_scaling = false;

  // Mixed precision: autocast casts each operator's inputs to `dtype` where that is safe.
  bool autocast() const { return !pure && dtype != c10::kFloat; }
  // Its text in descriptors and records ("bf16-pure"); parse_precision(p.str()) == p.
  std::string str() const;
  bool operator==(const Precision& o) const {
    return dtype == o.dtype && pure == o.pure && loss_scaling == o.loss_scaling;
  }
  bool operator!=(const Precision& o) const { return !(*this == o); }
};

// The one rule for precision text. Throws std::invalid_argument
// "unknown precision 'fp64' (fp32, fp16, bf16, fp16-pure, bf16-pure)".
Precision parse_precision(const std::string& text);

}  // namespace trainbench
