// Precisions as text, without LibTorch: the one table of their names and the type each computes in,
// for code that reads records (results/) as much as for the parser (core/precision.h), which maps a
// row's type to LibTorch's dtype.
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

}  // namespace trainbench
