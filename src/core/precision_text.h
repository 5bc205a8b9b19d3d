// Precisions without LibTorch: the one table of their names and the type each computes in, for code
// that reads records (results/) as much as for cases, and the value a case holds (core/precision.h
// maps its type to LibTorch's dtype).
#pragma once
#include <string>
#include <vector>

namespace trainbench {

struct PrecisionRow {
  const char* text;   // "bf16-pure": descriptors, records, --precision
  const char* type;   // "bf16": the type it computes in, by its mixed precision's name
  bool pure;          // parameters, buffers and inputs in that type; else autocast
  bool loss_scaling;  // fp16 under autocast
};

// One row per precision, in the order --help lists them: fp32, fp16, bf16, fp16-pure, bf16-pure.
const std::vector<PrecisionRow>& precision_table();

// Every precision by its text, in the table's order.
const std::vector<std::string>& precision_names();

// The types precisions compute in, each by its mixed precision's name: fp32, fp16, bf16 (what `peak`
// measures a ceiling for; a pure precision's ceiling is its type's).
const std::vector<std::string>& dtype_names();

// True when `text` names a precision.
bool is_precision(const std::string& text);

// The type a precision computes in ("bf16-pure" -> "bf16"); empty for text that names no precision.
std::string compute_type(const std::string& precision);

// A training precision as a value: the type a case computes in, and how it gets there.
//   fp32                   everything in fp32
//   fp16, bf16             automatic mixed precision (autocast); fp16 with dynamic loss scaling
//   fp16-pure, bf16-pure   the whole model, its buffers and its float inputs in that type
// Cases, descriptors and records carry the text; code that acts on a precision parses it here, once,
// and asks the value (`type`, `pure`, `loss_scaling`) instead of comparing the text. core/precision.h
// maps `type` to LibTorch's dtype.
struct Precision {
  std::string type = "fp32";  // the type the model's layers compute in: a row's type (fp32, fp16, bf16)
  bool pure = false;          // parameters, buffers and inputs in `type`; else autocast
  // fp16's narrow range needs loss scaling under autocast; bf16 has fp32's range and needs none. The
  // pure types run without it: they measure the speed of the type, not a training recipe.
  bool loss_scaling = false;

  // Mixed precision: autocast casts each operator's inputs to `type` where that is safe.
  bool autocast() const { return !pure && type != "fp32"; }
  // Its text in descriptors and records ("bf16-pure"); parse_precision(p.str()) == p.
  std::string str() const;
  bool operator==(const Precision& o) const {
    return type == o.type && pure == o.pure && loss_scaling == o.loss_scaling;
  }
  bool operator!=(const Precision& o) const { return !(*this == o); }
};

// The one rule for precision text. Throws std::invalid_argument
// "unknown precision 'fp64' (fp32, fp16, bf16, fp16-pure, bf16-pure)".
Precision parse_precision(const std::string& text);

}  // namespace trainbench
