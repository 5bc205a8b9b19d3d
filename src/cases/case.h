// A Case: one point of a plan, with a compact descriptor that round-trips (parse(print(c)) == c).
//   resnet50:b64:fp32:nchw:cpu          bert:layers=12,seq=200:b32:bf16:nchw:adamw:cuda:0
// Grammar (docs/descriptors.md): MODEL[:PARAMS]:bBATCH:PRECISION:LAYOUT[:OPTIMIZER][:tTHREADS]
//   [:data=PATH[:data-dtype=uint32][:loader=N][:transfer=uint8]][:fwd]:DEVICE
// where PARAMS is key=value[,key=value...], OPTIMIZER is printed only when not sgd, tTHREADS only when
// set, data=PATH only for real input data, and DEVICE (cpu, cuda, cuda:N) always comes last. Parameter
// values and PATH are percent-escaped (below), so any text can be one.
#pragma once
#include <stdexcept>
#include <string>

#include "cases/options.h"

namespace trainbench {

struct Case : WorkloadOptions {
  int threads = 0;  // intra-op threads; 0 = one per core
  // `--batch auto`: the largest batch that trains is searched first, from `batch` up. How the case is
  // planned, not what it is: not in the descriptor.
  bool search_batch = false;

  std::string descriptor() const;
  bool operator==(const Case& o) const { return descriptor() == o.descriptor(); }
};

// A descriptor that does not parse. The message quotes the whole input and points at the bad part.
class DescriptorError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Parameter values are percent-escaped in a descriptor, so any text (a TorchScript file's path) can be
// one: '%', ':', ',', '=', space and control bytes become %XX (two upper-case hex digits); every other
// byte stays as it is, so the values of the built-in workloads read unchanged.
std::string escape_param_value(const std::string& value);
// The inverse; throws std::invalid_argument for a '%' not followed by two hex digits.
std::string unescape_param_value(const std::string& text);

// Parses a descriptor; checks the grammar and the value sets (precision, layout, optimizer, device),
// not whether the model exists (see plan.h).
Case parse_case(const std::string& descriptor);

}  // namespace trainbench
