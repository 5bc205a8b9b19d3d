#include "ops/census_names.h"

#include <set>
#include <string>

namespace trainbench {

// Operators that launch no kernel of their own: views, allocations, shape queries.
bool launches_nothing(const char* name) {
  static const std::set<std::string> none = {"aten::view",
                                             "aten::_unsafe_view",
                                             "aten::_reshape_alias",
                                             "aten::reshape",
                                             "aten::as_strided",
                                             "aten::transpose",
                                             "aten::t",
                                             "aten::permute",
                                             "aten::expand",
                                             "aten::expand_as",
                                             "aten::slice",
                                             "aten::select",
                                             "aten::unsqueeze",
                                             "aten::squeeze",
                                             "aten::detach",
                                             "aten::alias",
                                             "aten::empty",
                                             "aten::empty_like",
                                             "aten::empty_strided",
                                             "aten::resize_",
                                             "aten::set_",
                                             "aten::split",
                                             "aten::split_with_sizes",
                                             "aten::chunk",
                                             "aten::narrow",
                                             "aten::unbind",
                                             "aten::flatten",
                                             "aten::unflatten",
                                             "aten::view_as",
                                             "aten::lift_fresh",
                                             "aten::numel",
                                             "aten::size",
                                             "aten::stride",
                                             "aten::contiguous",
                                             "aten::to",
                                             "aten::type_as",
                                             "aten::result_type",
                                             "aten::item",
                                             "aten::_local_scalar_dense",
                                             "aten::is_nonzero",
                                             "aten::broadcast_tensors",
                                             "aten::_has_compatible_shallow_copy_type",
                                             "aten::is_same_size",
                                             "aten::dim",
                                             "aten::lift",
                                             "aten::_shape_as_tensor",
                                             "aten::expand_copy"};
  return none.count(name) > 0;
}

// Products no kind's reader describes (batched products outside attention): FLOPs from the shapes.
bool is_product(const char* name) {
  static const std::set<std::string> products = {"aten::mm", "aten::bmm", "aten::matmul", "aten::addmm",
                                                 "aten::baddbmm"};
  return products.count(name) > 0;
}

// Operators CUDA autocast runs in fp32 whatever their inputs' type (casting 16-bit inputs up).
bool autocast_fp32(const std::string& name) {
  static const std::set<std::string> wide = {"aten::layer_norm",
                                             "aten::group_norm",
                                             "aten::softmax",
                                             "aten::log_softmax",
                                             "aten::cross_entropy_loss",
                                             "aten::nll_loss",
                                             "aten::mse_loss",
                                             "aten::l1_loss",
                                             "aten::smooth_l1_loss",
                                             "aten::kl_div",
                                             "aten::binary_cross_entropy_with_logits",
                                             "aten::exp",
                                             "aten::log",
                                             "aten::pow",
                                             "aten::norm",
                                             "aten::logsumexp",
                                             "aten::rsqrt",
                                             "aten::reciprocal"};
  return wide.count(name) > 0;
}

bool is_softmax(const std::string& name) { return name == "aten::softmax" || name == "aten::_softmax"; }
bool is_dropout(const std::string& name) {
  return name == "aten::dropout" || name == "aten::native_dropout" || name == "aten::feature_dropout";
}

}  // namespace trainbench
