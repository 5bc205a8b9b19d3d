// The typed vocabulary: precisions (core/precision.h), the device-kind table (core/device.h) and the
// op kind table (ops/op_kind.h). The expected values come from the documented recipes and grammars
// (docs/methodology.md's precisions, docs/descriptors.md's devices and op kinds) and from shapes.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/precision.h"
#include "ops/op_kind.h"
#include "cases/case.h"
#include "workloads/training.h"

namespace trainbench {
namespace {

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// ---- precision -----------------------------------------------------------------------------------

TEST(PrecisionVocab, EveryNameRoundTripsAndNamesADistinctValue) {
  const std::vector<std::string> names = {"fp32", "fp16", "bf16", "fp16-pure", "bf16-pure"};  // --help's order
  EXPECT_EQ(precision_names(), names);
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_TRUE(is_precision(names[i]));
    EXPECT_EQ(parse_precision(names[i]).str(), names[i]);
    for (size_t j = 0; j < i; ++j)
      EXPECT_NE(parse_precision(names[i]), parse_precision(names[j])) << names[i] << " " << names[j];
  }
}

// The recipes of docs/methodology.md: autocast for fp16 and bf16, loss scaling for fp16 only (bf16 has
// fp32's exponent range), the pure types with neither.
TEST(PrecisionVocab, EachPrecisionCarriesItsRecipe) {
  struct Want {
    const char* name;
    c10::ScalarType dtype;
    bool pure, autocast, loss_scaling;
  };
  for (const Want& w :
       {Want{"fp32", c10::kFloat, false, false, false}, Want{"fp16", c10::kHalf, false, true, true},
        Want{"bf16", c10::kBFloat16, false, true, false}, Want{"fp16-pure", c10::kHalf, true, false, false},
        Want{"bf16-pure", c10::kBFloat16, true, false, false}}) {
    const Precision p = parse_precision(w.name);
    EXPECT_EQ(torch_dtype(p), w.dtype) << w.name;
    EXPECT_EQ(p.pure, w.pure) << w.name;
    EXPECT_EQ(p.autocast(), w.autocast) << w.name;
    EXPECT_EQ(p.loss_scaling, w.loss_scaling) << w.name;
  }
  EXPECT_EQ(Precision{}, parse_precision("fp32"));  // the default is a case's default
}

TEST(PrecisionVocab, UnknownTextIsOneClearError) {
  EXPECT_EQ(error_of([] { parse_precision("fp64"); }),
            "unknown precision 'fp64' (fp32, fp16, bf16, fp16-pure, bf16-pure)");
  for (const char* bad : {"", "FP32", "bf16-", "-pure", "fp16 ", "fp32-pure"}) {
    EXPECT_FALSE(is_precision(bad)) << bad;
    EXPECT_THROW(parse_precision(bad), std::invalid_argument) << bad;
  }
}

// CPU autocast computes a matrix product in bf16; a pure precision leaves the types to the tensors.
TEST(PrecisionVocab, AutocastScopeFollowsThePrecision) {
  const auto a = torch::randn({4, 4}), b = torch::randn({4, 4});
  {
    detail::AutocastScope amp(parse_precision("bf16"), DeviceSpec{});
    EXPECT_EQ(torch::mm(a, b).scalar_type(), torch::kBFloat16);
  }
  EXPECT_EQ(torch::mm(a, b).scalar_type(), torch::kFloat);  // left as it was
  {
    detail::AutocastScope pure(parse_precision("bf16-pure"), DeviceSpec{});
    EXPECT_EQ(torch::mm(a, b).scalar_type(), torch::kFloat);
  }
  EXPECT_EQ(detail::input_dtype(parse_precision("bf16-pure")), torch::kBFloat16);
  EXPECT_EQ(detail::input_dtype(parse_precision("bf16")), torch::kFloat);  // autocast casts inside
}

// ---- devices -------------------------------------------------------------------------------------

TEST(DeviceKinds, TheTableHasTheHostFirstAndCudaAsAnIndexedGpu) {
  ASSERT_FALSE(device_kinds().empty());
  EXPECT_STREQ(device_kinds().front().name, "cpu");
  EXPECT_FALSE(device_kinds().front().gpu);
  EXPECT_FALSE(device_kinds().front().indexed);
  const DeviceKind* cuda = find_device_kind("cuda");
  ASSERT_NE(cuda, nullptr);
  EXPECT_TRUE(cuda->gpu);
  EXPECT_TRUE(cuda->indexed);
  EXPECT_EQ(cuda->torch_type, c10::DeviceType::CUDA);
  EXPECT_EQ(find_device_kind("xpu"), nullptr);
  EXPECT_EQ(gpu_device(2).str(), "cuda:2");
}

// The messages name the device texts the table accepts (docs/descriptors.md: cpu, cuda, cuda:N).
TEST(DeviceKinds, ParsingFollowsTheTable) {
  EXPECT_EQ(device_choices(), "cpu, cuda or cuda:N");
  EXPECT_EQ(error_of([] { parse_device("tpu"); }), "unknown device 'tpu' (expected cpu, cuda or cuda:N)");
  EXPECT_EQ(error_of([] { parse_device("cpu:0"); }), "bad device 'cpu:0' (expected cpu, cuda or cuda:N)");
  EXPECT_EQ(error_of([] { parse_device("cuda:x"); }), "bad device 'cuda:x' (expected cpu, cuda or cuda:N)");
  const DeviceSpec d = parse_device("cuda:2");
  EXPECT_EQ(d.str(), "cuda:2");
  EXPECT_TRUE(d.is_gpu());
  EXPECT_EQ(torch_device(d), torch::Device(torch::kCUDA, 2));
  EXPECT_EQ(torch_device(parse_device("cuda")), torch::Device(torch::kCUDA, 0));  // the default GPU
  EXPECT_EQ(torch_device(parse_device("cpu")), torch::Device(torch::kCPU));
  EXPECT_FALSE(parse_device("cpu").is_gpu());
  EXPECT_FALSE(DeviceSpec{"tpu"}.is_gpu());
  EXPECT_THROW(device_kind(DeviceSpec{"tpu"}), std::invalid_argument);
}

TEST(DeviceKinds, RecordDeviceTextNamesItsKind) {
  EXPECT_TRUE(is_gpu_device_text("cuda:0"));
  EXPECT_TRUE(is_gpu_device_text("cuda"));
  EXPECT_FALSE(is_gpu_device_text("cpu"));
  EXPECT_FALSE(is_gpu_device_text(""));
  EXPECT_FALSE(is_gpu_device_text("cudax"));
  EXPECT_EQ(device_kind_of("cuda:3"), find_device_kind("cuda"));
}

// The host has no allocator statistics (src/memory counts its bytes) and nothing to wait for.
TEST(DeviceKinds, TheHostsHooksAreTheProcesss) {
  const DeviceSpec cpu;
  EXPECT_NO_THROW(synchronize(cpu));
  EXPECT_NO_THROW(set_current_device(cpu));
  EXPECT_NO_THROW(reset_peak_memory(cpu));
  EXPECT_EQ(allocated_bytes(cpu), 0);
  EXPECT_EQ(peak_reserved_bytes(cpu), 0);
  EXPECT_GT(peak_memory_bytes(cpu), 0);  // this process's max RSS
  EXPECT_EQ(device_unavailable_reason(cpu), "");
  EXPECT_EQ(best_device(), torch::cuda::is_available() ? "cuda" : "cpu");
}

TEST(DeviceKinds, DescriptorsTakeAnIndexOnlyAfterAnIndexedKind) {
  EXPECT_EQ(parse_case("resnet18:b2:fp32:nchw:cuda:7").device.str(), "cuda:7");
  const std::string e = error_of([] { parse_case("resnet18:b2:fp32:nchw:cpu:7"); });
  EXPECT_NE(e.find("'7' is not a device (cpu, cuda or cuda:N) — the device comes last"), std::string::npos) << e;
}

// ---- descriptor fields read by parse_case's steps ------------------------------------------------

TEST(CaseParser, ThreadCountsNameTheirBound) {
  EXPECT_NE(error_of([] {
              parse_case("resnet18:b2:fp32:nchw:t0:cpu");
            }).find("'t0' is not a thread count (tN with N between 1 and 1024) (at column 23)"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_case("resnet18:b2:fp32:nchw:data=/d:loader=2000:cpu");
            }).find("'loader=2000' is not a loader thread count (loader=N with N between 1 and 1024)"),
            std::string::npos);
  EXPECT_EQ(parse_case("resnet18:b2:fp32:nchw:t3:data=/d:loader=4:cpu").loader_threads, 4);
}

// ---- op kinds ------------------------------------------------------------------------------------

TEST(OpKinds, OneEntryPerKindInTheDocumentedOrder) {
  const std::vector<std::string> want = {"conv", "gemm", "linear", "lstm", "attention", "bn"};
  EXPECT_EQ(op_kinds(), want);
  ASSERT_EQ(op_kind_table().size(), want.size());
  for (const auto& k : op_kind_table()) {
    EXPECT_FALSE(k.fields.empty()) << k.name;
    EXPECT_TRUE(k.fields.front().required) << k.name;  // a descriptor is never just "KIND:"
    EXPECT_NE(k.label, nullptr) << k.name;
    EXPECT_NE(k.build, nullptr) << k.name;
    EXPECT_EQ(find_op_kind(k.name), &k);
  }
  EXPECT_EQ(find_op_kind("pool"), nullptr);
}

// The families efficiency is compared within, which kinds have weights and where the layout matters
// (op_descriptor.h: attention's core has no weights; nhwc changes conv and bn tensors only).
TEST(OpKinds, FamiliesWeightsAndLayouts) {
  const std::map<std::string, std::string> family = {{"conv", "conv"}, {"gemm", "matmul"},         {"linear", "matmul"},
                                                     {"lstm", "lstm"}, {"attention", "attention"}, {"bn", "norm"}};
  for (const auto& k : op_kind_table()) {
    EXPECT_EQ(k.family, family.at(k.name));
    EXPECT_EQ(k.has_weights, std::string(k.name) != "attention") << k.name;
    EXPECT_EQ(k.layout_matters, std::string(k.name) == "conv" || std::string(k.name) == "bn") << k.name;
  }
}

// Every dispatched operator the layer collector reads belongs to exactly one kind.
TEST(OpKinds, EachDispatchedOperatorHasOneReader) {
  std::multiset<std::string> names;
  for (const auto& k : op_kind_table())
    for (const auto& r : k.readers) names.insert(r.op_name);
  const std::multiset<std::string> want = {"aten::convolution", "aten::_convolution", "aten::linear",
                                           "aten::addmm",       "aten::matmul",       "aten::mm",
                                           "aten::lstm",        "aten::batch_norm",   "trainbench::attention"};
  EXPECT_EQ(names, want);
}

// Each builder makes the layer its descriptor names: the forward's output shape follows from the
// fields (conv: (5 + 2*1 - 3) / 2 + 1 = 3), and the tensors split into data and weights as the phases need.
TEST(OpKinds, BuildersMakeTheDescribedLayer) {
  struct Want {
    const char* op;
    std::vector<int64_t> out;
    size_t data, weights;
  };
  const std::vector<Want> wants = {
      {"conv:mb2ic4ih5oc6kh3sh2ph1", {2, 6, 3, 3}, 1, 1},
      {"gemm:m2n3k4", {2, 3}, 1, 1},
      {"linear:m2n3k4", {2, 3}, 1, 2},                   // weight and bias
      {"lstm:mb2t3i4h5l2d2", {2, 3, 10}, 1, 2 * 2 * 4},  // batch-first; 4 tensors per layer and direction
      {"attention:mb2s3nh2hd4", {2, 2, 3, 4}, 3, 0},     // q, k, v
      {"bn:mb2ic3ih4", {2, 3, 4, 4}, 1, 2},
  };
  OpBuildSettings s;
  for (const auto& w : wants) {
    const OpDescriptor d = parse_op(w.op);
    OpInstance op = find_op_kind(d.kind)->build(d, s);
    EXPECT_EQ(op.forward().sizes().vec(), w.out) << w.op;
    EXPECT_EQ(op.data.size(), w.data) << w.op;
    EXPECT_EQ(op.weights.size(), w.weights) << w.op;
  }
  s.channels_last = true;
  const OpDescriptor conv = parse_op("conv:mb1ic2ih4oc2kh1");
  EXPECT_TRUE(find_op_kind("conv")->build(conv, s).data[0].is_contiguous(at::MemoryFormat::ChannelsLast));
  s.dtype = c10::kBFloat16;
  EXPECT_EQ(find_op_kind("gemm")->build(parse_op("gemm:m2n2k2"), s).data[0].scalar_type(), c10::kBFloat16);
}

}  // namespace
}  // namespace trainbench
