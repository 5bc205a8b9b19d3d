// A precision's LibTorch dtype: the value itself (core/precision_text.h) needs no LibTorch.
#pragma once
#include <c10/core/ScalarType.h>

#include "core/precision_text.h"

namespace trainbench {

// The dtype a precision's layers compute in (fp16: kHalf, bf16: kBFloat16, fp32: kFloat).
c10::ScalarType torch_dtype(const Precision& p);

}  // namespace trainbench
