// The device catalogue, the prediction method, predicted records and the `devices` and `predict`
// commands. Each formula is checked against numbers worked out here by hand from a two-operator step
// and two cards (the arithmetic is written out in each test, never taken from the method's helpers).
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "core/value_rules.h"
#include "predict/catalogue.h"
#include "predict/census.h"
#include "predict/gpu_memory.h"
#include "predict/method.h"
#include "results/record.h"
#include "results/results_file.h"

namespace trainbench {
namespace {

using predict::CensusOp;
using predict::DeviceSpec;
using predict::OpClass;
using predict::StepCensus;

const std::string kHeader =
    "id,name,vendor,architecture,compute_units,boost_mhz,memory_gb,memory_gbps,l2_mb,fp32_tflops,tf32_tflops,"
    "bf16_tflops,fp16_tflops,host_link_gbps,gpu_link_gbps,tdp_w,source\n";

// Card a: 10 units, fp32 10 TFLOP/s, bf16 100, 1000 GB/s, 80 GiB. Card b: 64 units, fp32 20, no tensor
// cores, 500 GB/s, 16 GiB.
const std::string kTwoCards = kHeader +
                              "a,Card A,nvidia,test,10,1000,80,1000,10,10,,100,100,32,,300,test sheet A\n"
                              "b,Card B,nvidia,test,64,1000,16,500,10,20,,,,32,,300,test sheet B\n";

predict::Constants test_constants() {
  predict::Constants k;
  k.version = "test";
  k.conv_efficiency = 0.5;
  k.matmul_efficiency = 0.5;
  k.conv_tensor_efficiency = 0.25;
  k.matmul_tensor_efficiency = 0.25;
  k.memory_efficiency = 0.8;
  k.kernel_floor_s = 1e-6;
  k.host_per_kernel_s = 0.0;
  k.autocast_memory_factor = 1.2;
  k.interval = 0.2;
  k.profile_interval = 0.1;
  return k;
}

constexpr double kN = 1280.0;  // the product: x[b*1280, 1280] @ w[1280, 1280]

// A two-operator step: a linear layer (1280 x 1280, 1280 rows a sample) and a ReLU on its output,
// trained with SGD. Counts at batch b: the product 2*1280^3*b FLOPs in each phase; it reads x and writes
// y (2 * 1280^2 * b activation elements) and reads w (1280^2); the ReLU reads y and writes its output.
CensusOp linear_at(double b) {
  CensusOp o;
  o.name = "aten::linear";
  o.label = "linear 1280x1280";
  o.descriptor = "linear:m" + std::to_string(static_cast<int64_t>(kN * b)) + "n1280k1280";
  o.op_class = OpClass::matmul;
  o.flops_fwd = o.flops_bwd_data = o.flops_bwd_weights = 2.0 * kN * kN * kN * b;
  o.act_elems = 2.0 * kN * kN * b;
  o.weight_elems = kN * kN;
  o.gemm_m = kN * b;
  o.gemm_n = kN;
  o.kernels = 1;
  o.has_backward = true;
  o.out_elems = kN * kN * b;  // 16-bit under autocast, as every product's output
  o.out_wide = false;
  return o;
}
CensusOp relu_at(double b) {
  CensusOp o;
  o.name = "aten::relu";
  o.label = "relu";
  o.op_class = OpClass::memory;
  o.act_elems = 2.0 * kN * kN * b;
  o.bwd_elems = 1.5 * o.act_elems;
  o.kernels = 1;
  o.has_backward = true;
  o.out_elems = kN * kN * b;  // made fp32 under autocast here (as a residual sum with an fp32 stream would be)
  o.out_wide = true;
  return o;
}

StepCensus two_op_census() {
  StepCensus c;
  c.model = "two-op";
  c.optimizer = "sgd";
  c.layout = "nchw";
  c.unit = "samples/s";
  c.libtorch_version = "test";
  c.batch1 = 1;
  c.batch2 = 2;
  c.ops1 = {linear_at(1), relu_at(1)};
  c.ops2 = {linear_at(2), relu_at(2)};
  c.parameters = static_cast<int64_t>(kN * kN);
  c.parameter_tensors = 1;
  c.tensor_peak1 = 1.1e9;  // the step's peak: 1e9 + 1e8 a sample
  c.tensor_peak2 = 1.2e9;
  c.forward_live1 = 0.6e9;  // after the forward: 0.5e9 of parameters and buffers + 1e8 a sample
  c.forward_live2 = 0.7e9;
  return c;
}

DeviceSpec card(const std::string& id) {
  for (const auto& d : predict::parse_catalogue(kTwoCards, "test")) {
    if (d.id == id) return d;
  }
  throw std::logic_error("no card " + id);
}

// ---- catalogue ----------------------------------------------------------------------------------

TEST(Catalogue, EveryRowHasItsSourceAndTheIssuesCardsAreThere) {
  const auto& rows = predict::builtin_catalogue();
  std::set<std::string> ids;
  for (const auto& d : rows) {
    ids.insert(d.id);
    EXPECT_FALSE(d.source.empty()) << d.id;
    EXPECT_GT(d.fp32_tflops, 0.0) << d.id;
    EXPECT_GT(d.memory_gbps, 0.0) << d.id;
    // A tensor core's dense peak is above the same card's fp32 figure wherever it exists.
    for (const auto& t : {d.tf32_tflops, d.bf16_tflops, d.fp16_tflops})
      if (t) {
        EXPECT_GE(*t, d.fp32_tflops) << d.id;
      }
  }
  for (const char* id :
       {"gtx1080",        "gtx1080ti", "radeon-vii", "v100-sxm2-16gb", "v100-sxm2-32gb", "t4",
        "rtx3090",        "rtx4090",   "a10",        "a100-sxm4-40gb", "a100-sxm4-80gb", "a100-pcie-40gb",
        "a100-pcie-80gb", "l4",        "l40s",       "h100-sxm",       "h100-pcie",      "h200",
        "mi250x-gcd",     "mi300x"})
    EXPECT_TRUE(ids.count(id)) << id;
  // The figures a buyer checks first, as the vendors print them (H100 SXM5 datasheet: 989.5 dense bf16,
  // 3.35 TB/s; GTX 1080: no tensor cores).
  const auto h100 = predict::select_devices(rows, {"h100-sxm"}).front();
  EXPECT_DOUBLE_EQ(*h100.bf16_tflops, 989.5);
  EXPECT_DOUBLE_EQ(h100.memory_gbps, 3350.0);
  const auto gtx = predict::select_devices(rows, {"gtx1080"}).front();
  EXPECT_FALSE(gtx.fp16_tflops.has_value());
  // The H100 80GB's visible memory is what the card reported (examples/h100): 85,017,493,504 bytes.
  EXPECT_NEAR(static_cast<double>(h100.visible_memory_bytes()), 85017493504.0, 1.0);
}

TEST(Catalogue, ADamagedRowIsOneLineNamingTheLineAndColumn) {
  const auto problem = [](const std::string& text) {
    try {
      predict::parse_catalogue(text, "cat.csv");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(problem(kHeader + "a,A,nvidia,x,10,1000,80,1000,10,ten,,,,32,,300,s\n")
                .find("cat.csv line 2: column fp32_tflops"),
            std::string::npos);
  EXPECT_NE(problem(kHeader + "a,A,nvidia,x,10,1000,80,1000,10,10,,,,32,,300,\n").find("column source: empty"),
            std::string::npos);
  EXPECT_NE(problem(kTwoCards + "a,A,nvidia,x,10,1000,80,1000,10,10,,,,32,,300,s\n").find("'a' appears twice"),
            std::string::npos);
  EXPECT_NE(problem(kHeader + "A!,A,nvidia,x,10,1000,80,1000,10,10,,,,32,,300,s\n").find("column id"),
            std::string::npos);
  EXPECT_NE(problem(kHeader + "a,A,nvidia,x,10,1000,80,1000,10,10,,,,32,,300\n").find("16 cells"), std::string::npos);
  EXPECT_NE(problem(kHeader + "a,A,nvidia,x,10,1000,80,,10,10,,,,32,,300,s\n").find("column memory_gbps: empty"),
            std::string::npos);
  EXPECT_NE(problem(kHeader + "a,A,nvidia,x,10,1000,80,1000,10,-3,,,,32,,300,s\n").find("fp32_tflops"),
            std::string::npos);
  EXPECT_NE(problem("id,name\n").find("the header must be"), std::string::npos);
  EXPECT_NE(problem(kHeader).find("no device rows"), std::string::npos);
}

TEST(Catalogue, AnUnknownIdNamesTheClosestOnes) {
  const auto& rows = predict::builtin_catalogue();
  try {
    predict::select_devices(rows, {"h100"});
    FAIL() << "accepted";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("unknown device 'h100'"), std::string::npos) << what;
    EXPECT_NE(what.find("h100-sxm"), std::string::npos) << what;
    EXPECT_NE(what.find("h100-pcie"), std::string::npos) << what;
  }
  try {
    predict::select_devices(rows, {"a100-sxm4-80"});
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("a100-sxm4-80gb"), std::string::npos) << e.what();
  }
  EXPECT_THROW(predict::select_devices(rows, {"t4", "t4"}), InputError);
  EXPECT_EQ(predict::select_devices(rows, {"all"}).size(), rows.size());
  EXPECT_EQ(predict::select_devices(rows, {"t4", "l4"}).back().id, "l4");
}

// ---- the method -----------------------------------------------------------------------------------

TEST(PredictMethod, PeaksFollowThePrecisionAndSayWhenAFigureIsMissing) {
  const DeviceSpec a = card("a"), b = card("b");
  EXPECT_DOUBLE_EQ(predict::peak_for(a, "fp32", false).tflops, 10.0);
  EXPECT_DOUBLE_EQ(predict::peak_for(a, "bf16", false).tflops, 100.0);
  EXPECT_DOUBLE_EQ(predict::peak_for(a, "fp16-pure", false).tflops, 100.0);
  // Card a has no tf32 figure: fp32's, said so.
  EXPECT_DOUBLE_EQ(predict::peak_for(a, "fp32", true).tflops, 10.0);
  EXPECT_NE(predict::peak_for(a, "fp32", true).note.find("no tf32 tensor cores"), std::string::npos);
  const auto fp16_on_b = predict::peak_for(b, "fp16", false);
  EXPECT_DOUBLE_EQ(fp16_on_b.tflops, 20.0);
  EXPECT_NE(fp16_on_b.note.find("b has no fp16 tensor cores"), std::string::npos);
}

TEST(PredictMethod, WaveFillIsTheShareOfTheLastWaveThatWorks) {
  // 400 tiles of 128 x 128 (5120 x 1280) on 64 units: 7 waves, 448 slots, 400 used.
  EXPECT_DOUBLE_EQ(predict::wave_fill(5120, 1280, 1, 64), 400.0 / 448.0);
  EXPECT_DOUBLE_EQ(predict::wave_fill(5120, 1280, 1, 10), 1.0);
  // One tile on 132 units: 1/132. A partial tile is a whole one.
  EXPECT_DOUBLE_EQ(predict::wave_fill(100, 1, 1, 132), 1.0 / 132.0);
  EXPECT_DOUBLE_EQ(predict::wave_fill(129, 128, 2, 8), 4.0 / 8.0);
}

TEST(PredictMethod, TheTwoOperatorStepOnTwoCardsAsWorkedByHand) {
  const StepCensus c = two_op_census();
  const auto k = test_constants();
  predict::Request r;
  r.batch = 4;
  r.precision = "fp32";
  // Card a, fp32, batch 4. The product: 2 * 1280^3 * 4 = 1.6777e10 FLOPs a phase at 10e12 x 0.5; its tiles
  // (5120/128) x (1280/128) = 400 fill 10 units exactly. Its bytes (4 * 2*1280^2 + 1280^2) x 4 B = 58,982,400
  // at 1000e9 x 0.8: 73.7 us, under the arithmetic. The ReLU: 2 * 1280^2 * 4 x 4 B = 52,428,800 B forward,
  // 1.5x that backward, memory-bound. SGD: 12 B x 1280^2 parameters.
  const double flops = 2.0 * kN * kN * kN * 4;
  const double product_a = flops / (10e12 * 0.5);
  const double relu_fwd_a = 2.0 * kN * kN * 4 * 4 / (1000e9 * 0.8);
  const double sgd_a = 12.0 * kN * kN / (1000e9 * 0.8);
  const auto fa = predict::forecast(c, card("a"), r, k);
  EXPECT_NEAR(fa.step_s, 3 * product_a + 2.5 * relu_fwd_a + sgd_a, 1e-12);
  EXPECT_NEAR(fa.compute_s, 3 * product_a, 1e-12);
  EXPECT_NEAR(fa.memory_s, 2.5 * relu_fwd_a + sgd_a, 1e-12);
  EXPECT_NEAR(fa.low_s, 0.8 * fa.step_s, 1e-12);
  EXPECT_NEAR(fa.high_s, 1.2 * fa.step_s, 1e-12);
  EXPECT_EQ(fa.slowest.front().first, "linear 1280x1280");

  // Card a, bf16: its tensor cores' 100 TFLOP/s at the tensor efficiency (0.25); 2-byte activations and
  // weights; autocast's casts (12 B a parameter) beside SGD's 12.
  r.precision = "bf16";
  const double product_a16 = flops / (100e12 * 0.25);
  const auto fa16 = predict::forecast(c, card("a"), r, k);
  EXPECT_NEAR(fa16.step_s, 3 * product_a16 + 2.5 * relu_fwd_a / 2 + 2 * sgd_a, 1e-12);
  EXPECT_TRUE(fa16.peak.tensor);

  // Card b, bf16, batch 4: no bf16 figure, so fp32's 20 TFLOP/s; 400 tiles on 64 units fill 400/448 of
  // forward's and backward-data's waves (backward-weights fills the card); 2-byte activations; autocast
  // adds 12 B a parameter of casts; 500 GB/s.
  r.precision = "bf16";
  const double fill = 400.0 / 448.0;
  const double product_b = flops / (20e12 * 0.5);
  const double relu_fwd_b = 2.0 * kN * kN * 4 * 2 / (500e9 * 0.8);
  const double per_param_b = 12.0 * kN * kN / (500e9 * 0.8);
  const auto fb = predict::forecast(c, card("b"), r, k);
  EXPECT_NEAR(fb.step_s, 2 * product_b / fill + product_b + 2.5 * relu_fwd_b + 2 * per_param_b, 1e-12);
  EXPECT_EQ(fb.peak.figure, "fp32");
  EXPECT_FALSE(fb.peak.note.empty());

  // A host slower to issue the kernels than the card to run them bounds the step: 6 kernels (3 product
  // phases, 2 ReLU, 1 SGD) x 2 ms = 12 ms against the card's 10.25 ms.
  auto slow_host = k;
  slow_host.host_per_kernel_s = 2e-3;
  r.precision = "fp32";
  const auto fh = predict::forecast(c, card("a"), r, slow_host);
  EXPECT_NEAR(fh.step_s, 12e-3, 1e-12);
  EXPECT_NEAR(fh.launch_s, 12e-3 - fa.step_s, 1e-12);
  EXPECT_NEAR(fh.compute_s + fh.memory_s + fh.launch_s, fh.step_s, 1e-12);
}

TEST(PredictMethod, APlantedWrongBandwidthMovesOnlyTheMemoryBoundPartByItsRatio) {
  const StepCensus c = two_op_census();
  const auto k = test_constants();
  predict::Request r;
  r.batch = 4;
  DeviceSpec a = card("a");
  const auto right = predict::forecast(c, a, r, k);
  a.memory_gbps = 500.0;  // half the bandwidth: the memory-bound seconds double, the compute ones stay
  const auto wrong = predict::forecast(c, a, r, k);
  EXPECT_NEAR(wrong.memory_s, 2.0 * right.memory_s, 1e-12);
  EXPECT_NEAR(wrong.compute_s, right.compute_s, 1e-12);
  EXPECT_GT(std::abs(wrong.step_s - right.step_s), 0.01 * right.step_s);
  // Swapping the two ceilings (a card with a's bandwidth as its FLOP/s and the reverse) is no longer
  // the card: the step moves far.
  DeviceSpec swapped = card("a");
  std::swap(swapped.fp32_tflops, swapped.memory_gbps);
  EXPECT_GT(std::abs(predict::forecast(c, swapped, r, k).step_s - right.step_s), 0.5 * right.step_s);
}

TEST(PredictMethod, MemoryIsTheTensorLineInThePrecisionsTypesTimesTheAllocatorsOverhead) {
  const StepCensus c = two_op_census();
  predict::Request r;
  r.batch = 100;
  r.precision = "bf16";
  r.context_bytes = kGpuContextBytes;
  // After the forward: 0.5e9 + 1e8 a sample in fp32. bf16 under autocast: the forward's new tensors are
  // one 16-bit and one fp32 of equal size, (2 + 4) / (4 + 4) = 0.75 of their fp32 bytes, times the
  // constants' 1.2 for what the card adds: 0.9e8. Fixed: the 0.5e9, the gradients (4 B a parameter),
  // autocast's 2-byte copies.
  EXPECT_DOUBLE_EQ(c.autocast_activation_ratio(), 0.75);
  const double fixed = 0.5e9 + 6.0 * kN * kN, per = 0.9e8;
  const DeviceSpec a = card("a");
  const auto k = test_constants();
  const auto m = predict::forecast_memory(c, a, r, k);
  EXPECT_DOUBLE_EQ(m.fixed_bytes, fixed);
  EXPECT_DOUBLE_EQ(m.per_sample_bytes, per);
  EXPECT_EQ(m.bytes, std::llround((fixed + 100 * per) * kGpuReservedPerTensorByte + kGpuContextBytes));
  EXPECT_TRUE(m.fits);
  const double visible = std::floor(80.0 * 1073741824.0 * predict::kVisibleMemoryShare);
  const auto largest = [&](double ratio) {
    return static_cast<int64_t>(std::floor(((visible - kGpuContextBytes) / ratio - fixed) / per));
  };
  EXPECT_EQ(m.largest_batch, largest(kGpuReservedPerTensorByte));
  EXPECT_EQ(m.largest_batch_low, largest(kGpuReservedPerTensorByteMax));
  EXPECT_EQ(m.largest_batch_high, largest(1.0));
  EXPECT_LE(m.largest_batch_low, m.largest_batch);
  EXPECT_LE(m.largest_batch, m.largest_batch_high);
  // Card b's 16 GiB hold fewer; a batch beyond them does not fit.
  r.batch = 1000;
  EXPECT_FALSE(predict::forecast_memory(c, card("b"), r, k).fits);
  // A pure precision holds everything in 16 bits: half the line.
  r.precision = "bf16-pure";
  const auto pure = predict::forecast_memory(c, a, r, k);
  EXPECT_DOUBLE_EQ(pure.fixed_bytes, 0.25e9 + 2.0 * kN * kN);
  EXPECT_DOUBLE_EQ(pure.per_sample_bytes, 0.5e8);
  // A small batch whose step peaks in the optimizer: the census's peak at batch 1 (1.1e9) bounds it.
  r.precision = "fp32";
  r.batch = 1;
  EXPECT_EQ(predict::forecast_memory(c, a, r, k).bytes,
            std::llround(1.1e9 * kGpuReservedPerTensorByte + kGpuContextBytes));
}

TEST(PredictMethod, AProfileCarriesEachLayerByTheMethodsRatioForIt) {
  const StepCensus c = two_op_census();
  const auto k = test_constants();
  predict::Request r;
  r.batch = 4;
  // Measured on a: the linear layer's three phases at 4, 5 and 6 ms a call, and 1 ms of the rest.
  predict::Profile p;
  p.layers.push_back({"linear:m5120n1280k1280", 1, {4e-3, 5e-3, 6e-3}});  // the layer at batch 4
  p.other_s = 1e-3;
  p.step_s = 16e-3;
  // On b at fp32: the product's phases take (1/fill, 1/fill, 1) x 2*1280^3*4 / (20e12 x 0.5) against a's
  // 2*1280^3*4 / (10e12 x 0.5) each; the rest (ReLU, SGD) is memory-bound: a's 1000 GB/s against b's 500.
  const double fill = 400.0 / 448.0;
  const double ratio_fwd = (1.0 / fill) * 10.0 / 20.0, ratio_w = 10.0 / 20.0;
  const double expected = 4e-3 * ratio_fwd + 5e-3 * ratio_fwd + 6e-3 * ratio_w + 1e-3 * (1000.0 / 500.0);
  const auto f = predict::carry(c, p, card("a"), card("b"), r, k);
  EXPECT_NEAR(f.step_s, expected, 1e-12);
  EXPECT_NEAR(f.low_s, 0.9 * expected, 1e-12);
  // Carried to the card it was measured on, the profile is itself.
  EXPECT_NEAR(predict::carry(c, p, card("a"), card("a"), r, k).step_s, 16e-3, 1e-12);
}

TEST(PredictMethod, TheCensusReadsOffItsLineAndRoundTrips) {
  const StepCensus c = two_op_census();
  const auto at4 = c.ops_at(4);
  EXPECT_DOUBLE_EQ(at4[0].flops_fwd, 2.0 * kN * kN * kN * 4);
  EXPECT_DOUBLE_EQ(at4[0].weight_elems, kN * kN);
  EXPECT_EQ(at4[0].descriptor, "linear:m5120n1280k1280");  // the rows read off the line too
  EXPECT_DOUBLE_EQ(at4[1].bwd_elems, 1.5 * 2.0 * kN * kN * 4);
  EXPECT_DOUBLE_EQ(c.activation_bytes_per_sample(), 1e8);
  EXPECT_DOUBLE_EQ(c.forward_base_bytes(), 0.5e9);
  const StepCensus back = predict::census_from_json(predict::to_json(c));
  EXPECT_EQ(predict::to_json(back), predict::to_json(c));
  auto j = predict::to_json(c);
  j["ops2"][1]["name"] = "aten::gelu";
  EXPECT_THROW(predict::census_from_json(j), std::runtime_error);
  j = predict::to_json(c);
  j["ops1"][0]["act_elems"] = -1;
  EXPECT_THROW(predict::census_from_json(j), std::runtime_error);
  j = predict::to_json(c);
  j["batch2"] = 1;
  EXPECT_THROW(predict::census_from_json(j), std::runtime_error);
}

// ---- records ----------------------------------------------------------------------------------------

// A record of `model` at `batch` (nchw, SGD) on `device` in `precision`, named by its descriptor.
Record case_record(const std::string& model, int64_t batch, const std::string& device, const std::string& precision,
                   Status status) {
  Record r;
  r.name = model + ":b" + std::to_string(batch) + ":" + precision + ":nchw:" + device;
  r.model = model;
  r.batch_size = batch;
  r.device = device;
  r.precision = precision;
  r.layout = "nchw";
  r.optimizer = "sgd";
  r.status = status;
  return r;
}

Record predicted_record() {
  Record r = case_record("resnet50", 256, "cuda", "fp16", Status::predicted);
  r.throughput = 2500.0;
  r.step_time_s.median = 256.0 / 2500.0;
  PredictionInfo p;
  p.method = "spec-sheet";
  p.device_id = "h100-sxm";
  p.device_name = "H100 SXM5 80GB";
  p.catalogue_source = "NVIDIA H100 Tensor Core GPU datasheet (SXM5)";
  p.constants = "test";
  p.step_time_low_s = 0.08;
  p.step_time_high_s = 0.13;
  p.throughput_low = 256.0 / 0.13;
  p.throughput_high = 256.0 / 0.08;
  p.compute_share = 0.4;
  p.memory_share = 0.5;
  p.launch_share = 0.1;
  p.slowest_layers = {{"batch norm 64", 0.1}};
  p.memory_bytes = 40000000000;
  p.fits = true;
  p.largest_batch_low = 500;
  p.largest_batch = 520;
  p.largest_batch_high = 600;
  r.prediction = p;
  return r;
}

TEST(PredictedRecord, RoundTripsAndIsNeverOk) {
  const Record r = predicted_record();
  EXPECT_FALSE(r.ok());
  const Record back = record_from_json(to_json(r));
  EXPECT_EQ(to_json(back), to_json(r));
  EXPECT_EQ(back.status, Status::predicted);
  ASSERT_TRUE(back.prediction.has_value());
  EXPECT_EQ(back.prediction->slowest_layers.front().label, "batch norm 64");
  EXPECT_EQ(back.prediction->largest_batch, 520);
  // A measured record is written as it always was: no prediction key.
  Record measured = r;
  measured.status = Status::ok;
  measured.prediction.reset();
  EXPECT_FALSE(to_json(measured).contains("prediction"));
}

TEST(PredictedRecord, APredictionAndItsStatusComeTogether) {
  auto j = to_json(predicted_record());
  j.erase("prediction");
  EXPECT_THROW(record_from_json(j), std::runtime_error);
  j = to_json(predicted_record());
  j["status"] = "ok";
  EXPECT_THROW(record_from_json(j), std::runtime_error);
  j = to_json(predicted_record());
  j["prediction"]["compute_share"] = 1.5;
  EXPECT_THROW(record_from_json(j), std::runtime_error);
  j = to_json(predicted_record());
  j["prediction"]["largest_batch"] = 700;  // above its interval
  EXPECT_THROW(record_from_json(j), std::runtime_error);
  j = to_json(predicted_record());
  j["prediction"]["method"] = "guess";
  EXPECT_THROW(record_from_json(j), std::runtime_error);
}

// ---- the commands -----------------------------------------------------------------------------------

TEST(DevicesCli, ListsEveryRowAsATableAndAsJsonWithItsSource) {
  const auto dir = test::temp_dir("predict", "devices");
  const auto table = test::run_trainbench("devices", dir);
  ASSERT_EQ(table.code, 0) << table.err;
  for (const auto& d : predict::builtin_catalogue()) EXPECT_NE(table.out.find(d.id), std::string::npos) << d.id;
  const auto json = test::run_trainbench("devices --format json", dir);
  ASSERT_EQ(json.code, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  ASSERT_EQ(j.size(), predict::builtin_catalogue().size());
  for (const auto& row : j) EXPECT_FALSE(row.at("source").get<std::string>().empty());
  std::ofstream(dir / "bad.csv") << kHeader << "x,X,nvidia,t,1,1,1,1,1,oops,,,,1,,1,s\n";
  EXPECT_TRUE(test::refused(test::run_trainbench("devices --catalogue " + (dir / "bad.csv").string(), dir),
                            {"bad.csv line 2: column fp32_tflops"}));
  EXPECT_TRUE(test::refused(test::run_trainbench("devices --format xml", dir), {"--format"}));
}

TEST(PredictCli, BadInputIsOneLine) {
  const auto dir = test::temp_dir("predict", "bad");
  EXPECT_TRUE(test::refused(test::run_trainbench("predict -m resnet18 -b 8 --on h100", dir),
                            {"unknown device 'h100'", "h100-sxm"}));
  EXPECT_TRUE(test::refused(test::run_trainbench("predict -m resnet18 -b 8 --on t4 --tf32 maybe", dir), {"--tf32"}));
  EXPECT_TRUE(test::refused(test::run_trainbench("predict -m nosuchmodel -b 8 --on t4", dir), {"nosuchmodel"}));
  EXPECT_TRUE(
      test::refused(test::run_trainbench("predict -m resnet18 -b 8 --on t4 --from-device t4", dir), {"--from-device"}));
  // One file cannot be both the predictions and the census.
  const std::string same = (dir / "both.json").string();
  EXPECT_TRUE(test::refused(
      test::run_trainbench("predict -m resnet18 -b 8 --on t4 -o " + same + " --census-out " + same, dir),
      {"--census-out", "is the same file as the input"}));
  // A CPU profile says nothing about a GPU's kernels: refused, pointing at the spec-sheet path.
  ResultsFile cpu;
  Record step = case_record("resnet18", 8, "cpu", "fp32", Status::ok);
  step.throughput = 10;
  cpu.benchmarks = {step};
  cpu.explain = Explanation{};
  write_results_atomic((dir / "cpu.json").string(), cpu);
  EXPECT_TRUE(
      test::refused(test::run_trainbench("predict -m resnet18 -b 8 --on t4 --from " + (dir / "cpu.json").string(), dir),
                    {"says nothing about a GPU's kernels", "spec-sheet path, which needs no profile"}));
  // A GPU profile of another batch: the difference named.
  step.device = "cuda";
  step.batch_size = 16;
  cpu.benchmarks = {step};
  write_results_atomic((dir / "gpu.json").string(), cpu);
  EXPECT_TRUE(
      test::refused(test::run_trainbench("predict -m resnet18 -b 8 --on t4 --from " + (dir / "gpu.json").string(), dir),
                    {"its batch is 16, the request's is 8"}));
  std::ofstream(dir / "census.json") << "{\"census_version\": 1}";
  EXPECT_TRUE(test::refused(
      test::run_trainbench("predict -m resnet18 -b 8 --on t4 --census " + (dir / "census.json").string(), dir),
      {"--census", "model"}));
}

// The whole path on a tiny model: a census taken on this CPU, a prediction per card, the records in
// the results file, and the census read back giving the same predictions.
TEST(PredictCli, ATinyModelOnTwoCardsWritesPredictedRecords) {
  const auto dir = test::temp_dir("predict", "tiny");
  const std::string model =
      "-m bert --set layers=1 --set hidden=64 --set heads=2 --set seq=32 --set vocab=500 -b 4,8 --precision fp32,bf16";
  const auto r = test::run_trainbench("predict " + model + " --on t4,h100-sxm -o " + (dir / "p.json").string() +
                                          " --census-out " + (dir / "census.json").string(),
                                      dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("Predicted, not measured"), std::string::npos) << r.out;
  const ResultsFile f = read_results((dir / "p.json").string());
  ASSERT_EQ(f.benchmarks.size(), 8u);  // 2 batches x 2 precisions x 2 cards
  for (const auto& rec : f.benchmarks) {
    EXPECT_EQ(rec.status, Status::predicted);
    ASSERT_TRUE(rec.prediction.has_value());
    EXPECT_EQ(rec.prediction->method, "spec-sheet");
    EXPECT_GT(rec.throughput, 0.0);
    EXPECT_LE(rec.prediction->throughput_low, rec.throughput);
    EXPECT_GE(rec.prediction->throughput_high, rec.throughput);
    EXPECT_NEAR(rec.prediction->compute_share + rec.prediction->memory_share + rec.prediction->launch_share, 1.0, 1e-6);
    EXPECT_EQ(rec.device, "cuda");
  }
  const auto again = test::run_trainbench(
      "predict " + model + " --on t4,h100-sxm --format json --census " + (dir / "census.json").string(), dir);
  ASSERT_EQ(again.code, 0) << again.err;
  const ResultsFile g = results_from_string(again.out, "stdout");
  ASSERT_EQ(g.benchmarks.size(), f.benchmarks.size());
  for (size_t i = 0; i < g.benchmarks.size(); ++i)
    EXPECT_DOUBLE_EQ(g.benchmarks[i].throughput, f.benchmarks[i].throughput) << i;
  // The census of another model is refused by name.
  EXPECT_TRUE(test::refused(
      test::run_trainbench("predict -m resnet18 -b 4 --on t4 --census " + (dir / "census.json").string(), dir),
      {"its model is 'bert', the request's is 'resnet18'"}));
}

// Two prediction files and a measured one of the same case: compare pairs the predictions of one card
// (their ratio marked as predicted, in no mean) and never a prediction with the measurement; the store
// refuses a file of predictions.
TEST(PredictCli, CompareNeverPairsAPredictionWithAMeasurementAndTheStoreKeepsNone) {
  const auto dir = test::temp_dir("predict", "compare");
  ResultsFile predicted;
  predicted.benchmarks = {predicted_record()};
  ResultsFile faster = predicted;
  faster.benchmarks[0].throughput = 3000.0;
  faster.benchmarks[0].step_time_s.median = 256.0 / 3000.0;
  ResultsFile measured = predicted;
  measured.benchmarks[0].status = Status::ok;
  measured.benchmarks[0].prediction.reset();
  measured.benchmarks[0].step_time_s.n = 20;
  for (const auto& [name, f] :
       {std::pair<const char*, const ResultsFile*>{"p.json", &predicted}, {"q.json", &faster}, {"m.json", &measured}})
    write_results_atomic((dir / name).string(), *f);
  const auto pair = test::run_trainbench(
      "compare " + (dir / "p.json").string() + " " + (dir / "q.json").string() + " --format json", dir);
  ASSERT_EQ(pair.code, 0) << pair.err;
  const auto j = nlohmann::json::parse(pair.out)["comparisons"][0];
  ASSERT_EQ(j["cases"].size(), 1u) << pair.out;
  EXPECT_EQ(j["cases"][0]["verdict"], "predicted");
  EXPECT_NEAR(j["cases"][0]["ratio"].get<double>(), 1.2, 1e-9);
  EXPECT_TRUE(j["geomean"].empty()) << "a ratio of predictions is in no mean: " << j["geomean"].dump();
  const auto mixed = test::run_trainbench(
      "compare " + (dir / "m.json").string() + " " + (dir / "p.json").string() + " --format json", dir);
  ASSERT_EQ(mixed.code, 0) << mixed.err;
  const auto k = nlohmann::json::parse(mixed.out)["comparisons"][0];
  EXPECT_TRUE(k["cases"].empty()) << mixed.out;
  EXPECT_EQ(k["only_in_base"].size(), 1u);
  EXPECT_EQ(k["only_in_other"].size(), 1u);
  const auto stored = test::run_trainbench(
      "store import --store " + (dir / "s.sqlite").string() + " " + (dir / "p.json").string(), dir);
  EXPECT_TRUE(test::refused(stored, {"holds predictions", "measurements only"})) << stored.err;
}

// A layer profile from a GPU (as `explain` writes it): its card found from the device's name and memory,
// and carried to that same card it is the measured step itself; to another card, a profile prediction.
TEST(PredictCli, AProfileIsCarriedFromTheCardItWasMeasuredOn) {
  const auto dir = test::temp_dir("predict", "profile");
  const std::string census = (dir / "c.json").string();
  ASSERT_EQ(test::run_trainbench("predict -m resnet18 -b 8 --on t4 --census-out " + census, dir).code, 0);
  const auto c = predict::census_from_json(nlohmann::json::parse(test::slurp(census)));
  ResultsFile f;
  f.context.device_name = "NVIDIA H100 80GB HBM3";
  f.context.device_memory_bytes = 85017493504;
  Record step = case_record("resnet18", 8, "cuda", "fp32", Status::ok);
  step.step_time_s.median = 0.010;
  step.throughput = 800;
  f.benchmarks = {step};
  Explanation e;
  e.case_name = step.name;
  e.step_time_s = 0.010;
  // Every product of the census at batch 8 as a layer of 0.1 ms a phase; the rest of the step is other.
  std::set<std::string> seen;
  for (const auto& o : c.ops_at(8)) {
    if (o.descriptor.empty() || o.op_class == predict::OpClass::memory || !seen.insert(o.descriptor).second) continue;
    ExplainLayer l;
    l.op = o.descriptor;
    l.label = o.label;
    l.count = 1;
    l.status = Status::ok;
    l.input_grad = o.flops_bwd_data > 0.0;
    l.fwd_s = l.bwd_weights_s = 1e-4;
    l.bwd_data_s = l.input_grad ? 1e-4 : 0.0;  // a model's first layer has no backward to its input
    e.layers.push_back(l);
    e.layers_time_s += l.fwd_s + l.bwd_data_s + l.bwd_weights_s;
  }
  ASSERT_GT(e.layers.size(), 5u);
  e.other_time_s = e.step_time_s - e.layers_time_s;
  f.explain = e;
  write_results_atomic((dir / "gpu.json").string(), f);
  const auto r = test::run_trainbench("predict -m resnet18 -b 8 --on h100-sxm,t4 --format json --census " + census +
                                          " --from " + (dir / "gpu.json").string(),
                                      dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const ResultsFile out = results_from_string(r.out, "stdout");
  ASSERT_EQ(out.benchmarks.size(), 2u);
  const auto& same = out.benchmarks[0];
  EXPECT_EQ(same.prediction->method, "profile");
  EXPECT_EQ(same.prediction->source_device, "h100-sxm");
  EXPECT_NEAR(same.step_time_s.median, 0.010, 1e-9);
  EXPECT_NEAR(same.throughput, 800.0, 1e-6);
  EXPECT_GT(out.benchmarks[1].step_time_s.median, 0.010) << "a T4 is slower than the H100 it was measured on";
  // A name no row matches: --from-device names the card.
  f.context.device_name = "NVIDIA Mystery GPU";
  write_results_atomic((dir / "gpu2.json").string(), f);
  EXPECT_TRUE(test::refused(
      test::run_trainbench(
          "predict -m resnet18 -b 8 --on t4 --census " + census + " --from " + (dir / "gpu2.json").string(), dir),
      {"--from-device"}));
  const auto named = test::run_trainbench("predict -m resnet18 -b 8 --on t4 --census " + census + " --from " +
                                              (dir / "gpu2.json").string() + " --from-device h100-sxm",
                                          dir);
  EXPECT_EQ(named.code, 0) << named.err;
}

}  // namespace
}  // namespace trainbench
