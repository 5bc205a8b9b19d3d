// Op descriptors: one layer alone, named compactly and round-tripping (parse(print(d)) == d and
// print(parse(s)) == s for a canonical s), in the style of benchdnn problem descriptors:
//   conv:mb32ic64ih56oc64kh3ph1g64    gemm:m1024n1024k1024    linear:m3200n3072k768
//   lstm:mb32t100i256h256l2d2         attention:mb8s200nh12hd64    bn:mb16ic32ih112
// A descriptor is KIND ':' then fields, each a lower-case name followed by a non-negative integer.
// Fields equal to their default are not printed; the grammar is in docs/descriptors.md.
#pragma once
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace trainbench {

class OpDescriptorError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// The timed phases of one layer (DeepBench): forward, backward to the input (data) and backward to
// the parameters (weights).
enum class OpPhase { fwd, bwd_data, bwd_weights };
const char* to_string(OpPhase p);
const std::vector<OpPhase>& all_phases();

struct OpDescriptor {
  std::string kind;                       // conv | gemm | linear | lstm | attention | bn
  std::map<std::string, int64_t> fields;  // every field, defaults filled in

  int64_t get(const std::string& field) const;  // throws std::out_of_range for a field the kind lacks
  std::string str() const;                      // canonical text
  bool operator==(const OpDescriptor& o) const { return kind == o.kind && fields == o.fields; }

  // Output spatial size of a conv (per dimension: 0 = height, 1 = width).
  int64_t conv_out(int dim) const;
  bool has_weights() const;  // attention (the scaled dot-product core) has none
  // FLOPs of one phase (one multiply-add = 2), from the shape alone; 0 where not counted (bn).
  double flops(OpPhase phase) const;
  // "depthwise conv 3x3 s2 (g=32)", "pointwise conv", "gemm 1024x1024x1024": for people.
  std::string label() const;
  // conv | matmul | lstm | attention | norm: the family whose efficiency layers are compared within.
  std::string family() const;
};

// Throws OpDescriptorError with one line that quotes the input and points at the bad field.
OpDescriptor parse_op(const std::string& text);

// Builds and validates a descriptor from fields given in code (defaults filled in).
OpDescriptor make_op(const std::string& kind, const std::map<std::string, int64_t>& fields);

// The kinds and, per kind, its fields in printing order with their meaning, for --help and docs.
struct OpFieldInfo {
  std::string name;
  std::string meaning;
  bool required;
};
const std::vector<std::string>& op_kinds();
const std::vector<OpFieldInfo>& op_fields(const std::string& kind);

}  // namespace trainbench
