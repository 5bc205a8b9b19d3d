// Op descriptors (parse/print, errors, FLOPs), the op timer, layer collection, attribution and the
// flag rule of `trainbench explain`, the peak cache, and their JSON.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "core/device.h"
#include "core/flops.h"
#include "ops/explain.h"
#include "ops/layers.h"
#include "ops/op_descriptor.h"
#include "ops/op_timer.h"
#include "ops/peak.h"
#include "results/results_file.h"
#include "runner/measure.h"
#include "runner/plan.h"
#include "workloads/workload.h"
#include "workloads/registry.h"

namespace trainbench {
namespace {

std::string parse_error(const std::string& text) {
  try {
    parse_op(text);
  } catch (const OpDescriptorError& e) {
    return e.what();
  }
  return "";
}

MeasureSettings quick() {
  MeasureSettings m;
  m.warmup_steps = 1;
  m.min_steps = 2;
  m.min_time_s = 0.0;
  m.max_time_s = 1.0;
  return m;
}

TEST(OpDescriptor, CanonicalTextRoundTrips) {
  for (const std::string s :
       {"conv:mb32ic64ih56oc64kh3ph1g64", "conv:mb2ic3ih224iw160oc64kh7sh2ph3", "conv:mb1ic8ih9oc8kh3kw1ph1pw0dh2",
        "gemm:m1024n1024k1024", "linear:m3200n3072k768", "lstm:mb32t100i256h256l2d2", "lstm:mb8t10i16h32",
        "attention:mb8s200nh12hd64", "bn:mb16ic32ih112", "bn:mb2ic4ih8iw6"}) {
    EXPECT_EQ(parse_op(s).str(), s);
    EXPECT_EQ(parse_op(parse_op(s).str()), parse_op(s));
  }
}

TEST(OpDescriptor, DefaultsAreFilledAndNotPrinted) {
  const OpDescriptor d = parse_op("conv:ph1oc64kh3mb32ih56ic64");  // any order in, canonical order out
  EXPECT_EQ(d.str(), "conv:mb32ic64ih56oc64kh3ph1");
  EXPECT_EQ(d.get("iw"), 56);
  EXPECT_EQ(d.get("kw"), 3);
  EXPECT_EQ(d.get("sh"), 1);
  EXPECT_EQ(d.get("pw"), 1);
  EXPECT_EQ(d.get("dw"), 1);
  EXPECT_EQ(d.get("g"), 1);
  EXPECT_EQ(parse_op("conv:mb1ic4ih8oc4kh3sh1g1").str(), "conv:mb1ic4ih8oc4kh3");  // explicit defaults dropped
  EXPECT_EQ(parse_op("lstm:mb1t2i3h4l1d1").str(), "lstm:mb1t2i3h4");
  EXPECT_EQ(make_op("conv", {{"mb", 2}, {"ic", 3}, {"ih", 8}, {"oc", 4}, {"kh", 3}, {"sh", 2}}).str(),
            "conv:mb2ic3ih8oc4kh3sh2");
}

TEST(OpDescriptor, ErrorsQuoteTheInputAndPointAtTheBadField) {
  EXPECT_EQ(parse_error("conv:mb32ic64ih56oc64kh3ph1g65"),
            "bad op descriptor 'conv:mb32ic64ih56oc64kh3ph1g65': 'g65' groups must divide ic (64) and oc (64) (at "
            "column 28)");
  EXPECT_EQ(parse_error("conv:mb32ic64xx3"),
            "bad op descriptor 'conv:mb32ic64xx3': 'xx3' is not a field of conv (fields: mb ic ih iw oc kh kw sh sw ph "
            "pw dh dw g) (at column 14)");
  EXPECT_NE(parse_error("conv2d:mb1").find("'conv2d' is not an op kind (conv, gemm, linear, lstm, attention, bn)"),
            std::string::npos);
  EXPECT_NE(parse_error("gemm:m8n8").find("missing field 'k'"), std::string::npos);
  EXPECT_NE(parse_error("gemm:m8n8k8m4").find("'m4' repeats field 'm'"), std::string::npos);
  EXPECT_NE(parse_error("gemm:m8k8n").find("'n' has no value"), std::string::npos);
  EXPECT_NE(parse_error("gemm:m08n8k8").find("'m08' has a leading zero"), std::string::npos);
  EXPECT_NE(parse_error("gemm:m0n8k8").find("'m0' must be at least 1"), std::string::npos);
  EXPECT_NE(parse_error("gemm:M8n8k8").find("'M' is not a field name"), std::string::npos);
  EXPECT_NE(parse_error("gemm:").find("no fields"), std::string::npos);
  EXPECT_NE(parse_error("gemm").find("expected KIND:FIELDS"), std::string::npos);
  EXPECT_NE(parse_error("conv:mb1ic1ih2oc1kh5").find("the kernel does not fit"), std::string::npos);
  EXPECT_NE(parse_error("lstm:mb1t1i1h1d3").find("'d3' must be 1 or 2"), std::string::npos);
  EXPECT_THROW(make_op("gemm", {{"m", 1}, {"n", 1}, {"k", 1}, {"q", 1}}), OpDescriptorError);
}

TEST(OpDescriptor, FlopsFollowTheShape) {
  const OpDescriptor conv = parse_op("conv:mb2ic8ih10oc16kh3sh2ph1");
  EXPECT_EQ(conv.conv_out(0), 5);
  EXPECT_DOUBLE_EQ(conv.flops(OpPhase::fwd), 2.0 * 2 * 16 * 8 * 9 * 5 * 5);
  EXPECT_DOUBLE_EQ(conv.flops(OpPhase::bwd_data), conv.flops(OpPhase::fwd));
  const OpDescriptor dw = parse_op("conv:mb2ic8ih10oc8kh3ph1g8");
  EXPECT_DOUBLE_EQ(dw.flops(OpPhase::fwd), 2.0 * 2 * 8 * 1 * 9 * 10 * 10);
  EXPECT_EQ(dw.label(), "depthwise conv 3x3 g=8");
  EXPECT_DOUBLE_EQ(parse_op("gemm:m2n3k4").flops(OpPhase::bwd_weights), 48.0);
  const OpDescriptor att = parse_op("attention:mb2s5nh3hd4");
  EXPECT_DOUBLE_EQ(att.flops(OpPhase::fwd), 2.0 * (2.0 * 6 * 5 * 5 * 4));
  EXPECT_DOUBLE_EQ(att.flops(OpPhase::bwd_weights), 0.0);
  EXPECT_FALSE(att.has_weights());
  // Bidirectional, two layers: the second layer reads both directions' outputs.
  const OpDescriptor lstm = parse_op("lstm:mb2t3i4h5l2d2");
  const double l0 = 2 * matmul_flops(6, 20, 4 + 5), l1 = 2 * matmul_flops(6, 20, 10 + 5);
  EXPECT_DOUBLE_EQ(lstm.flops(OpPhase::fwd), l0 + l1);
}

// The shape formulas agree with the FLOPs LibTorch's own operators report for the same layer.
TEST(OpDescriptor, FlopsMatchTheCountedForwardOfTheRealOp) {
  torch::NoGradGuard no_grad;
  const OpDescriptor conv = parse_op("conv:mb2ic8ih10oc16kh3sh2ph1g2");
  auto x = torch::randn({2, 8, 10, 10}), w = torch::randn({16, 4, 3, 3});
  EXPECT_DOUBLE_EQ(count_flops([&] { (void)torch::conv2d(x, w, {}, 2, 1, 1, 2); }), conv.flops(OpPhase::fwd));
  const OpDescriptor lin = parse_op("linear:m6n5k4");
  auto a = torch::randn({6, 4}), lw = torch::randn({5, 4}), lb = torch::randn({5});
  EXPECT_DOUBLE_EQ(count_flops([&] { (void)torch::nn::functional::linear(a, lw, lb); }), lin.flops(OpPhase::fwd));
  const OpDescriptor att = parse_op("attention:mb2s5nh3hd4");
  auto q = torch::randn({2, 3, 5, 4});
  EXPECT_DOUBLE_EQ(
      count_flops([&] { (void)torch::matmul(torch::softmax(torch::matmul(q, q.transpose(-2, -1)), -1), q); }),
      att.flops(OpPhase::fwd));
}

TEST(OpTimer, TimesEachPhaseAndSkipsTheOnesALayerLacks) {
  OpSettings s;
  s.measure = quick();
  const OpRecord conv = time_op(parse_op("conv:mb2ic4ih8oc4kh3ph1"), s);
  ASSERT_TRUE(conv.ok()) << conv.error;
  ASSERT_EQ(conv.phases.size(), 3u);
  EXPECT_EQ(conv.phases[0].phase, "fwd");
  EXPECT_EQ(conv.phases[1].phase, "bwd_data");
  EXPECT_EQ(conv.phases[2].phase, "bwd_weights");
  for (const auto& p : conv.phases) {
    EXPECT_GE(p.time_s.n, 2);
    EXPECT_GT(p.time_s.median, 0.0);
    EXPECT_GT(p.achieved_gflops, 0.0);
  }
  EXPECT_NEAR(conv.total_time_s(),
              conv.phases[0].time_s.median + conv.phases[1].time_s.median + conv.phases[2].time_s.median, 1e-12);

  const OpRecord att = time_op(parse_op("attention:mb1s8nh2hd4"), s);
  ASSERT_TRUE(att.ok()) << att.error;
  ASSERT_EQ(att.phases.size(), 2u);  // no weights
  s.input_grad = false;
  const OpRecord first = time_op(parse_op("gemm:m8n8k8"), s);
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first.phases.size(), 2u);  // a first layer has no backward-data
  EXPECT_EQ(first.phases[1].phase, "bwd_weights");
  for (const std::string d : {"lstm:mb2t3i4h5l2d2", "linear:m4n3k2", "bn:mb2ic3ih4"}) {
    s.input_grad = true;
    s.layout = Layout::nhwc;
    const OpRecord r = time_op(parse_op(d), s);
    EXPECT_TRUE(r.ok()) << d << ": " << r.error;
    EXPECT_EQ(r.phases.size(), 3u) << d;
  }
}

TEST(OpTimer, AFailureIsAValueWithOneLine) {
  OpSettings s;
  s.measure = quick();
  OpDescriptor d = parse_op("gemm:m4n4k4");
  d.kind = "nope";  // no kind builds it
  const OpRecord r = time_op(d, s);
  EXPECT_EQ(r.status, Status::error);
  EXPECT_NE(r.error.find("no timer for op kind 'nope'"), std::string::npos);
  EXPECT_TRUE(r.phases.empty());
}

TEST(Layers, CollectsEachDistinctShapeWithItsCountAndInputGradient) {
  Case c = parse_case("convnet:channels=8,depth=2,image=8,variant=separable:b2:fp32:nchw:cpu");
  validate_case(c);
  auto w = make_workload(c);
  const auto layers = collect_layers([&] { w->step(); });
  ASSERT_EQ(layers.size(), 3u);
  EXPECT_EQ(layers[0].op.str(), "conv:mb2ic3ih8oc8kh3ph1");
  EXPECT_FALSE(layers[0].input_grad);  // the stem reads the data
  EXPECT_EQ(layers[0].count, 1);
  EXPECT_EQ(layers[1].op.str(), "conv:mb2ic8ih8oc8kh3ph1g8");
  EXPECT_TRUE(layers[1].input_grad);
  EXPECT_EQ(layers[1].count, 2);
  EXPECT_EQ(layers[2].op.str(), "conv:mb2ic8ih8oc8kh1");
  EXPECT_EQ(layers[2].count, 2);
}

TEST(Layers, SeesLstmAttentionLinearAndBatchNorm) {
  Case bert = parse_case("bert:heads=2,hidden=16,layers=1,seq=8,vocab=50:b2:fp32:nchw:cpu");
  validate_case(bert);
  auto w = make_workload(bert);
  const auto layers = collect_layers([&] { w->step(); });
  bool attention = false, linear = false;
  for (const auto& l : layers) {
    attention |= l.op.str() == "attention:mb2s8nh2hd8";
    linear |= l.op.kind == "linear";
  }
  EXPECT_TRUE(attention);
  EXPECT_TRUE(linear);
  Case lstm = parse_case("bilstm:embed=8,hidden=8,seq=5,vocab=20:b2:fp32:nchw:cpu");
  validate_case(lstm);
  auto wl = make_workload(lstm);
  bool found = false;
  for (const auto& l : collect_layers([&] { wl->step(); })) found |= l.op.str() == "lstm:mb2t5i8h8l2d2";
  EXPECT_TRUE(found);
  Case cnn = parse_case("mobilenet_v1:b1:fp32:nchw:cpu");
  validate_case(cnn);
  auto wc = make_workload(cnn);
  bool bn = false, depthwise = false;
  for (const auto& l : collect_layers([&] { wc->step(); })) {
    bn |= l.op.kind == "bn";
    depthwise |= l.op.label().rfind("depthwise", 0) == 0;
  }
  EXPECT_TRUE(bn);
  EXPECT_TRUE(depthwise);
}

// GPT-2's block (Radford et al. 2019, as Hugging Face's GPT2Block): c_attn H->3H, c_proj H->H, mlp c_fc
// H->4H and c_proj 4H->H, then the LM head H->V. With H 16, one layer, vocab 50 and 2x8 tokens (m = 16)
// those five products are every linear layer of the step; the backward's input and weight gradient
// products (e.g. [16,64]x[64,16], [64,16]x[16,16]) are not layers of their own.
TEST(Layers, BackwardProductsAreNotLinearLayers) {
  Case c = parse_case("gpt:heads=2,hidden=16,layers=1,seq=8,vocab=50:b2:fp32:nchw:cpu");
  validate_case(c);
  auto w = make_workload(c);
  std::map<std::string, int64_t> linear;
  for (const auto& l : collect_layers([&] { w->step(); })) {
    if (l.op.kind == "linear") linear[l.op.str()] += l.count;
  }
  const std::map<std::string, int64_t> expected{{"linear:m16n48k16", 1},
                                                {"linear:m16n16k16", 1},
                                                {"linear:m16n64k16", 1},
                                                {"linear:m16n16k64", 1},
                                                {"linear:m16n50k16", 1}};
  EXPECT_EQ(linear, expected);
}

ExplainLayer synthetic(const std::string& op, int64_t count, double seconds_per_call) {
  LayerCall call{parse_op(op), true, count};
  OpRecord r;
  r.status = Status::ok;
  for (OpPhase p : all_phases()) {
    OpPhaseRecord ph;
    ph.phase = to_string(p);
    ph.time_s.median = seconds_per_call / 3.0;
    ph.flops = call.op.flops(p);
    r.phases.push_back(ph);
  }
  return explain_layer(call, r, 100.0);
}

Explanation synthetic_step() {
  Explanation e;
  e.case_name = "convnet:variant=separable:b32:fp32:nchw:cpu";
  e.peak_gflops = 100.0;
  // Pointwise: 2*32*64*64*56*56*3 FLOPs = 2.47 GFLOP per call in 0.05 s: 49 GFLOP/s.
  e.layers.push_back(synthetic("conv:mb32ic64ih56oc64kh1", 8, 0.05));
  // Depthwise: 0.35 GFLOP per call in 0.06 s: 5.8 GFLOP/s, 0.23x the conv average.
  e.layers.push_back(synthetic("conv:mb32ic64ih56oc64kh3ph1g64", 8, 0.06));
  // A tiny depthwise layer: just as slow, but under 2% of the step.
  e.layers.push_back(synthetic("conv:mb32ic64ih7oc64kh3ph1g64", 1, 0.001));
  e.step_time_s = 1.0;
  return e;
}

TEST(Explain, AttributionAddsUpAndSortsByTime) {
  Explanation e = synthetic_step();
  attribute(e);
  EXPECT_DOUBLE_EQ(e.layers_time_s, 8 * 0.05 + 8 * 0.06 + 0.001);
  // The step (1 s) less 0.4 + 0.48 + 0.001 s of layers.
  EXPECT_NEAR(e.other_time_s, 0.119, 1e-12);
  ASSERT_EQ(e.layers.size(), 3u);
  EXPECT_EQ(e.layers[0].op, "conv:mb32ic64ih56oc64kh3ph1g64");
  EXPECT_NEAR(e.layers[0].share, 0.48, 1e-12);
  EXPECT_NEAR(e.layers[0].percent_of_peak, e.layers[0].achieved_gflops, 1e-9);  // peak 100
}

TEST(Explain, FlagsLayersFarBelowTheirFamilyOrThePeak) {
  Explanation e = synthetic_step();
  attribute(e);
  EXPECT_TRUE(e.layers[0].flagged);   // depthwise, 48% of the step at 0.23x the conv average
  EXPECT_FALSE(e.layers[1].flagged);  // pointwise: the bulk of the average
  EXPECT_FALSE(e.layers[2].flagged);  // as slow, but too small to matter
  // 3 phases x 2*32*64*9*56*56 FLOPs per call in 0.06 s; the conv family: all FLOPs over all time.
  EXPECT_EQ(e.layers[0].finding,
            "depthwise conv 3x3 g=64 (x8): 48.0% of step time at 5.78 GFLOP/s, 5.8% of peak; "
            "0.23x the model's conv average (25.6 GFLOP/s)");
  ASSERT_FALSE(e.findings.empty());
  EXPECT_EQ(e.findings[0], e.layers[0].finding);

  // Against the device: with a peak of 1000 GFLOP/s the pointwise layers (4.9%) are flagged too.
  Explanation high = synthetic_step();
  high.peak_gflops = 1000.0;
  attribute(high);
  EXPECT_TRUE(high.layers[1].flagged);
  // A stricter family rule (0.1x) and no peak leave depthwise, at 0.23x, unflagged.
  Explanation no_peak = synthetic_step();
  no_peak.peak_gflops = NAN;
  FlagRule rule;
  rule.below_family = 0.1;
  attribute(no_peak, rule);
  EXPECT_FALSE(no_peak.layers[0].flagged);
  EXPECT_TRUE(no_peak.findings.empty() || no_peak.findings[0].find("depthwise") == std::string::npos);
}

TEST(Explain, NamesTheFasterAlternative) {
  Explanation e = synthetic_step();
  attribute(e);
  ExplainLayer& dw = e.layers[0];
  ASSERT_TRUE(dw.flagged);
  dw.alternatives = {{"fp32", "nhwc", Status::ok, "", 0.03, 2.0},
                     {"bf16", "nchw", Status::error, "not supported", 0, 0}};
  summarize_alternatives(e);
  EXPECT_NE(dw.finding.find("; try --layout nhwc (2.00x faster)"), std::string::npos) << dw.finding;
  bool summary = false, failure = false;
  for (const auto& f : e.findings) {
    summary |= f == "with --layout nhwc the flagged layers take 240 ms instead of 480 ms per step: 2.00x, faster";
    failure |= f == "with --precision bf16 the flagged layers could not run: not supported";
  }
  EXPECT_TRUE(summary);
  EXPECT_TRUE(failure);
}

// On a tiny model, end to end: the layers timed alone and the reported difference make the step.
TEST(Explain, TinyModelEndToEnd) {
  Case c = parse_case("convnet:channels=8,depth=2,image=8,variant=separable:b2:fp32:nchw:cpu");
  validate_case(c);
  // Medians of 9 or more samples each, the step's and every phase's: one sample slowed by another test's
  // load (ctest -j) moves none of them, where the median of 2 could be 10 times the step. One intra-op
  // thread: beside another 2-thread benchmark on 2 cores, two threads waiting for each other at every
  // operator made the layers timed alone 49 ms against an 11 ms step.
  // Put back afterwards: the tests after this one in the same binary run with the threads they expect.
  struct RestoreThreads {
    int before = at::get_num_threads();
    ~RestoreThreads() { at::set_num_threads(before); }
  } restore;
  configure_threads(1);
  MeasureSettings m = quick();
  m.min_steps = 9;
  m.min_time_s = 0.05;
  const Record step = measure_case(c, m);
  ASSERT_TRUE(step.ok()) << step.error;
  ExplainSettings s;
  s.c = c;
  s.op_measure = m;
  s.peak_gflops = NAN;
  s.try_alternatives = true;
  const Explanation e = explain_case(s, step);
  ASSERT_EQ(e.layers.size(), 3u);
  double sum = 0.0;
  for (const auto& l : e.layers) {
    ASSERT_EQ(l.status, Status::ok) << l.error;
    EXPECT_NEAR(l.time_s, l.count * (l.fwd_s + l.bwd_data_s + l.bwd_weights_s), 1e-12);
    EXPECT_EQ(l.input_grad, l.bwd_data_s > 0.0);
    sum += l.time_s;
  }
  EXPECT_NEAR(e.layers_time_s, sum, 1e-12);
  // `other` is the measured step's median (taken from the record, not from explain) less the layers.
  EXPECT_NEAR(e.other_time_s, step.step_time_s.median - sum, 1e-12);
  // Layers timed alone are real timings of this step's work: together more than nothing, and not an
  // order of magnitude beyond the whole step they are part of.
  EXPECT_GT(e.layers_time_s, 0.0);
  EXPECT_LT(e.layers_time_s, 10.0 * step.step_time_s.median);
  EXPECT_EQ(e.case_name, c.descriptor());
}

// An fp32 case with TF32 on is measured against the GEMM with TF32 allowed, never the IEEE fp32 one;
// a peak that lacks it (a cache from before) gives none. Other precisions and TF32 off are as before.
TEST(OpJson, ATf32CaseIsMeasuredAgainstTheTf32Gemm) {
  PeakInfo p;
  p.gemm_gflops = {{"fp32", 51600.0}, {"tf32", 378000.0}, {"bf16", 686000.0}};
  EXPECT_DOUBLE_EQ(p.peak_for("fp32", "on"), 378000.0);
  EXPECT_DOUBLE_EQ(p.peak_for("fp32", "off"), 51600.0);
  EXPECT_DOUBLE_EQ(p.peak_for("fp32", "n/a"), 51600.0);
  EXPECT_DOUBLE_EQ(p.peak_for("bf16", "on"), 686000.0);  // autocast's matrix products are bf16's
  PeakInfo old = p;
  old.gemm_gflops.erase("tf32");
  EXPECT_TRUE(std::isnan(old.peak_for("fp32", "on")));
  EXPECT_DOUBLE_EQ(old.peak_for("fp32", "off"), 51600.0);
}

TEST(OpJson, RecordsPeakAndExplanationRoundTripThroughAResultsFile) {
  ResultsFile f;
  f.context.cpu_model = "cpu";
  PeakInfo p;
  p.device = "cpu";
  p.gemm_gflops = {{"fp32", 150.0}, {"bf16", 20.0}};
  p.gemm_unsupported = {{"fp16", "addmm not implemented for 'Half'"}};
  p.conv_op = "conv:mb16ic128ih28oc128kh3ph1";
  f.context.peak = p;
  OpSettings s;
  s.measure = quick();
  f.ops.push_back(time_op(parse_op("gemm:m4n4k4"), s));
  Explanation e = synthetic_step();
  attribute(e);
  f.explain = e;
  const ResultsFile back = results_from_string(results_to_string(f), "mem");
  EXPECT_EQ(to_json(back), to_json(f));
  ASSERT_TRUE(back.context.peak);
  EXPECT_DOUBLE_EQ(back.context.peak->peak_for("bf16-pure"), 20.0);
  EXPECT_TRUE(std::isnan(back.context.peak->peak_for("fp16")));
  ASSERT_EQ(back.ops.size(), 1u);
  EXPECT_EQ(back.ops[0].phases.size(), 3u);
  ASSERT_TRUE(back.explain);
  EXPECT_EQ(back.explain->layers.size(), 3u);
  // A file without them (written before they existed) still reads.
  auto j = to_json(f);
  j.erase("ops");
  j.erase("explain");
  j["context"].erase("peak");
  const ResultsFile old = results_from_json(j, "old");
  EXPECT_TRUE(old.ops.empty());
  EXPECT_FALSE(old.explain);
  EXPECT_FALSE(old.context.peak);
}

TEST(PeakCache, StoresAndFindsByDeviceThreadsAndVersion) {
  const auto dir = std::filesystem::temp_directory_path() / ("trainbench-peak-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  ::setenv("TRAINBENCH_CACHE_DIR", dir.c_str(), 1);
  EXPECT_EQ(peak_cache_path(), (dir / "peak.json").string());
  EXPECT_FALSE(find_cached_peak("cpu", "x", 2, "1.13.0"));  // no cache yet: no entry, no failure
  PeakInfo p;
  p.device = "cpu";
  p.device_name = "x";
  p.threads = 2;
  p.libtorch_version = "1.13.0";
  p.gemm_gflops["fp32"] = 100.0;
  store_peak(p);
  p.threads = 1;
  p.gemm_gflops["fp32"] = 50.0;
  store_peak(p);
  p.gemm_gflops["fp32"] = 55.0;
  store_peak(p);  // replaces its own entry
  ASSERT_TRUE(find_cached_peak("cpu", "x", 2, "1.13.0"));
  EXPECT_DOUBLE_EQ(find_cached_peak("cpu", "x", 2, "1.13.0")->gemm_gflops.at("fp32"), 100.0);
  EXPECT_DOUBLE_EQ(find_cached_peak("cpu", "x", 1, "1.13.0")->gemm_gflops.at("fp32"), 55.0);
  EXPECT_FALSE(find_cached_peak("cpu", "y", 2, "1.13.0"));
  EXPECT_FALSE(find_cached_peak("cpu", "x", 2, "2.1.0"));
  std::ofstream(dir / "peak.json") << "{ damaged";
  EXPECT_FALSE(find_cached_peak("cpu", "x", 2, "1.13.0"));
  ::unsetenv("TRAINBENCH_CACHE_DIR");
  std::filesystem::remove_all(dir);
}

TEST(Peak, MeasuresSmallCeilingsOnThisCpu) {
  PeakSettings s;
  s.precisions = {"fp32", "fp64"};
  s.gemm_size = 64;
  s.copy_bytes = 1 << 20;
  s.measure = quick();
  const PeakInfo p = measure_peak(s, "test cpu", at::get_num_threads());
  EXPECT_GT(p.gemm_gflops.at("fp32"), 0.0);
  EXPECT_EQ(p.gemm_unsupported.count("fp64"), 1u);  // an unknown type is a reason, not a crash
  EXPECT_GT(p.copy_gbps, 0.0);
  EXPECT_GT(p.conv_gflops, 0.0);
  EXPECT_EQ(p.conv_op, "conv:mb16ic128ih28oc128kh3ph1");
}

}  // namespace
}  // namespace trainbench
