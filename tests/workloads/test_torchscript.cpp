// Your own model (workloads/script.h): the TorchScript fixtures of scripts/fixtures/make-test-models.py load,
// count their parameters and FLOPs as their layer shapes say, and train; descriptors carry any path;
// SHA-256 against FIPS 180-2's vectors and sha256sum; each refusal is one line and exit 2 before
// anything runs; a run records the file's size and digest.
#include <gtest/gtest.h>

#include <torch/script.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli_util.h"
#include "core/sha256.h"
#include "results/record.h"
#include "results/results_file.h"
#include "cases/case.h"
#include "runner/plan.h"
#include "workloads/registry.h"
#include "workloads/script.h"
#include "workloads/workload.h"

namespace trainbench {
namespace {

using namespace test;
namespace fs = std::filesystem;

const std::string kData = TRAINBENCH_TEST_DATA;
const std::string kConv = kData + "/tiny_conv.pt";
const std::string kLm = kData + "/tiny_lm.pt";
const std::string kFast = " --threads 1 --warmup 1 --min-steps 2 --min-time 0 --max-time 3 --max-noise 100";

WorkloadOptions script_options(const std::string& file, const std::string& input, const std::string& target,
                               int64_t batch) {
  WorkloadOptions o;
  o.model = kScriptModel;
  o.params = {{"file", file}, {"input", input}, {"target", target}};
  o.batch = batch;
  return o;
}

// FIPS 180-2, appendix B.1 ("abc") and B.2 (the 448-bit two-block message); the empty string's digest
// is the one every implementation (sha256sum of an empty file) gives.
TEST(Sha256, FipsVectors) {
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // Fed in pieces across the 64-byte block boundary: the same digest.
  Sha256 s;
  const std::string msg = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  s.update(msg.data(), 7);
  s.update(msg.data() + 7, msg.size() - 7);
  EXPECT_EQ(s.hex_digest(), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

// The fixture's digest as coreutils' sha256sum computes it (an independent implementation).
TEST(Sha256, FixtureMatchesSha256sum) {
  const auto dir = temp_dir("torchscript", "sha");
  if (shell("command -v sha256sum > /dev/null") != 0) GTEST_SKIP() << "no sha256sum on this machine";
  ASSERT_EQ(shell("sha256sum " + kConv + " > " + (dir / "sum.txt").string()), 0);
  const std::string expected = slurp(dir / "sum.txt").substr(0, 64);
  const FileDigest d = digest_file(kConv);
  EXPECT_EQ(d.sha256, expected);
  EXPECT_EQ(d.bytes, static_cast<int64_t>(fs::file_size(kConv)));
}

// The record's file fields go through JSON and back; a file without them (a built-in model's row, an
// older results file) reads as 0 and ""; a digest that is not 64 lower-case hex digits is refused.
TEST(ScriptRecord, FileFieldsRoundTripAndOlderFilesRead) {
  Record r;
  r.model_file_bytes = 8811;
  r.model_file_sha256 = sha256_hex("abc");
  nlohmann::json j = to_json(r);
  const Record back = record_from_json(j);
  EXPECT_EQ(back.model_file_bytes, 8811);
  EXPECT_EQ(back.model_file_sha256, r.model_file_sha256);
  j.erase("model_file_bytes");
  j.erase("model_file_sha256");
  const Record old = record_from_json(j);
  EXPECT_EQ(old.model_file_bytes, 0);
  EXPECT_EQ(old.model_file_sha256, "");
  EXPECT_FALSE(to_json(Record{}).contains("model_file_sha256"));  // built-in rows stay as they were
  j["model_file_sha256"] = "ABC";
  EXPECT_THROW(record_from_json(j), std::runtime_error);
}

// Percent-escaping, by the rule in cases/case.h: '%' -> %25, ':' -> %3A, ',' -> %2C, '=' -> %3D, ' ' -> %20.
TEST(ScriptDescriptor, PathWithSeparatorsRoundTrips) {
  Case c;
  c.model = kScriptModel;
  c.params = {{"file", "/tmp/my model:v1,a=b%.pt"}, {"input", "3x8x8"}, {"target", "classes:5"}};
  c.batch = 2;
  const std::string d = c.descriptor();
  EXPECT_EQ(d, "script:file=/tmp/my%20model%3Av1%2Ca%3Db%25.pt,input=3x8x8,target=classes%3A5:b2:fp32:nchw:cpu");
  const Case back = parse_case(d);
  EXPECT_EQ(back.params, c.params);
  EXPECT_EQ(back.descriptor(), d);
  // Values of the built-in workloads have none of those characters: their descriptors read as before.
  EXPECT_EQ(parse_case("bert:layers=2,seq=16:b4:fp32:nchw:cpu").descriptor(), "bert:layers=2,seq=16:b4:fp32:nchw:cpu");
  EXPECT_THROW(parse_case("script:file=a%2:b2:fp32:nchw:cpu"), DescriptorError);
  EXPECT_THROW(parse_case("script:file=a%zz.pt:b2:fp32:nchw:cpu"), DescriptorError);
  EXPECT_EQ(unescape_param_value(escape_param_value("tab\there\x01")), "tab\there\x01");
  // A NUL would cut the path where it is used as a C string: refused, not round-tripped.
  EXPECT_THROW(parse_case("script:file=a%00.pt:b2:fp32:nchw:cpu"), DescriptorError);
}

TEST(ScriptSpecs, ParseAndPrint) {
  EXPECT_EQ(parse_script_input("3x224x224").shape, (std::vector<int64_t>{3, 224, 224}));
  EXPECT_EQ(parse_script_input("3x224x224").str(), "3x224x224");
  EXPECT_TRUE(parse_script_input("tokens:512").tokens);
  EXPECT_EQ(parse_script_input("tokens:512").str(), "tokens:512");
  EXPECT_EQ(parse_script_target("classes:1000").size, 1000);
  EXPECT_EQ(parse_script_target("next-token:32000").str(), "next-token:32000");
  EXPECT_EQ(parse_script_target("mse").str(), "mse");
  for (const char* bad : {"", "3x", "x3", "3xx4", "0x4", "3x-4", "tokens:", "tokens:0", "3.5"}) {
    EXPECT_THROW(parse_script_input(bad), std::invalid_argument) << bad;
  }
  for (const char* bad : {"classes", "classes:", "classes:1", "next-token:x", "mse:3", "ce"}) {
    EXPECT_THROW(parse_script_target(bad), std::invalid_argument) << bad;
  }
}

// tiny_conv (scripts/fixtures/make-test-models.py): conv 3->4 k3 with bias 4*3*3*3 + 4 = 112, batch norm 2*4 = 8,
// linear 4->5 with bias 4*5 + 5 = 25: 145. tiny_lm: embedding 16*8 = 128, linear 8->8 8*8 + 8 = 72,
// linear 8->16 8*16 + 16 = 144: 344.
TEST(ScriptWorkload, ParameterCountsFromTheLayerShapes) {
  EXPECT_EQ(make_workload(script_options(kConv, "3x8x8", "classes:5", 2))->parameters(), 145);
  EXPECT_EQ(make_workload(script_options(kLm, "tokens:6", "next-token:16", 2))->parameters(), 344);
}

// FLOPs from the dispatched operators: the conv's forward per sample is 2 * 4 * 8*8 * 3*3*3 = 13824 and
// its weight gradient the same (its input is the data: no backward-data); the linear layer's forward
// 2 * 4 * 5 = 40, with backward-data and backward-weights 40 each. Batch 4: 4 * (2*13824 + 3*40).
TEST(ScriptWorkload, FlopsFromTheOperators) {
  auto w = make_workload(script_options(kConv, "3x8x8", "classes:5", 4));
  EXPECT_DOUBLE_EQ(w->flops_per_step(), 4.0 * (2 * 13824 + 3 * 40));
  EXPECT_DOUBLE_EQ(w->step_flops().forward, 4.0 * (13824 + 40));
}

TEST(ScriptWorkload, TrainingLowersTheLossAndChangesTheParameters) {
  torch::manual_seed(0);
  auto w = make_workload(script_options(kConv, "3x8x8", "classes:5", 8));
  std::vector<torch::Tensor> before;
  for (const auto& p : w->trainable_parameters()) before.push_back(p.detach().clone());
  ASSERT_EQ(before.size(), 6u);  // conv weight and bias, batch norm weight and bias, linear weight and bias
  w->step();
  const double first = w->last_loss();
  for (int i = 0; i < 30; ++i) w->step();
  EXPECT_LT(w->last_loss(), first);  // the same synthetic batch every step: SGD must fit it better
  // Every parameter moves but the conv's bias: the batch norm right after the conv subtracts each
  // channel's batch mean, so a constant added to a channel changes nothing downstream and its gradient
  // is zero but for rounding (LibTorch 2.x's kernels give exactly zero; 1.13's a few ulps).
  const auto after = w->trainable_parameters();
  for (size_t i = 0; i < before.size(); ++i) {
    if (i == 1) {
      EXPECT_LT((after[i] - before[i]).abs().max().item<double>(), 1e-6) << "the conv's bias";
    } else {
      EXPECT_FALSE(torch::equal(before[i], after[i])) << "parameter " << i;
    }
  }
}

TEST(ScriptWorkload, TokenLmTrains) {
  torch::manual_seed(0);
  auto lm = make_workload(script_options(kLm, "tokens:6", "next-token:16", 4));
  EXPECT_EQ(lm->unit(), "sequences/s");
  EXPECT_EQ(lm->tokens_per_step(), 4 * 6);
  lm->step();
  const double first = lm->last_loss();
  for (int i = 0; i < 30; ++i) lm->step();
  EXPECT_LT(lm->last_loss(), first);
}

// The first step's loss against the same loss computed here: tiny_conv loaded anew and run in training
// mode (batch norm on the batch's statistics, as the workload trains it) on the same batch. The batch
// follows from the data seed: after seeding, the workload draws the N(0, 1) input, then the target (the
// labels for classes:K, or for mse the N(0, 1) tensor of the output's shape). Losses written out:
// mean squared difference; cross-entropy as logsumexp minus the label's logit. 1e-5: fp32 rounding
// (the executor's optimised graph decomposes batch norm into other operators, in another order).
constexpr int64_t kBatch = 4;

// The seeded input, tiny_conv's output for it, and the target drawn after it (`target_shape`; labels
// below `classes` when classes > 0).
struct ConvReference {
  torch::Tensor output, target;
};
ConvReference conv_reference(uint64_t seed, std::vector<int64_t> target_shape, int64_t classes = 0) {
  torch::manual_seed(seed);
  const torch::Tensor input = torch::randn({kBatch, 3, 8, 8});
  ConvReference r;
  r.target = classes > 0 ? torch::randint(0, classes, target_shape, torch::kLong) : torch::randn(target_shape);
  torch::jit::Module m = torch::jit::load(kConv);
  m.train(true);
  torch::NoGradGuard no_grad;
  r.output = m.forward({input}).toTensor();
  return r;
}

double first_loss(const WorkloadOptions& o) {
  auto w = make_workload(o);
  w->step();
  return w->last_loss();
}

TEST(ScriptWorkload, FirstLossIsTheModulesLossOnItsBatch) {
  constexpr uint64_t kSeed = 9;
  auto mse = script_options(kConv, "3x8x8", "mse", kBatch);
  mse.data_seed = kSeed;
  const ConvReference regression = conv_reference(kSeed, {kBatch, 5});
  const double expected_mse = (regression.output - regression.target).pow(2).mean().item<double>();
  EXPECT_NEAR(first_loss(mse), expected_mse, 1e-5 * expected_mse);

  // classes:5, in fp32 (channels-first and channels-last) and under bf16 autocast (channels-last).
  auto classes = script_options(kConv, "3x8x8", "classes:5", kBatch);
  classes.data_seed = kSeed;
  const ConvReference labelled = conv_reference(kSeed, {kBatch}, 5);
  const torch::Tensor picked = labelled.output.gather(1, labelled.target.unsqueeze(1)).squeeze(1);
  const double expected = (torch::logsumexp(labelled.output, 1) - picked).mean().item<double>();
  EXPECT_NEAR(first_loss(classes), expected, 1e-5 * expected);
  auto nhwc = classes;
  nhwc.layout = Layout::nhwc;
  // Channels-last reorders the convolution's sums: fp32 rounding only.
  const double nhwc_fp32 = first_loss(nhwc);
  EXPECT_NEAR(nhwc_fp32, expected, 1e-5 * expected);
  // Channels-last applies as for the zoo: the conv weight is stored channels-last.
  EXPECT_TRUE(make_workload(nhwc)->trainable_parameters().at(0).is_contiguous(at::MemoryFormat::ChannelsLast));
  // bf16 autocast: the same loss within bf16's rounding, and not bit for bit fp32's (a bf16 case that
  // silently ran in fp32 would give that). The bound: tiny_conv's logits are of order 1; bf16 keeps 8
  // significant bits (2^-8 = 0.004 relative a rounding), and the input, the convolution, the batch norm
  // and the linear layer each round once: at most about 0.015 on a logit. Cross-entropy moves at most
  // twice the largest logit change (its gradient, softmax - one-hot, sums to 2 in absolute value): 0.03.
  nhwc.precision = parse_precision("bf16");
  const double bf16 = first_loss(nhwc);
  EXPECT_NEAR(bf16, expected, 0.03);
  EXPECT_NE(bf16, nhwc_fp32);
}

// Each refusal: exit 2, one line on stderr saying which and why, and no results file (nothing ran).
void expect_refused(const std::string& name, const std::string& args, const std::string& says) {
  const auto dir = temp_dir("torchscript", name);
  const auto out = dir / "r.json";
  const bool search = args.rfind("maxbatch", 0) == 0 || args.rfind("memory", 0) == 0;  // these take no --batch
  const CmdResult r = run_trainbench(args + (search ? "" : " --batch 2") + " -o " + out.string(), dir);
  EXPECT_TRUE(refused(r, {says})) << name;
  EXPECT_FALSE(fs::exists(out)) << name;
}

TEST(ScriptCli, MissingOrUnloadableFile) {
  expect_refused("missing", "run --model /nonexistent/m.pt --input 3x8x8 --target classes:5", "no such file");
  const auto dir = temp_dir("torchscript", "junk");
  std::ofstream(dir / "junk.pt") << "not a zip archive\n";
  expect_refused("unloadable", "run --model " + (dir / "junk.pt").string() + " --input 3x8x8 --target classes:5",
                 "cannot load TorchScript model");
}

TEST(ScriptCli, SavedByANewerPyTorch) {
  expect_refused("newer", "run --model " + kData + "/tiny_future.pt --input 3x8x8 --target classes:5",
                 "saved by a newer PyTorch than this build's LibTorch " TORCH_VERSION
                 ": its file format version is 11, "
                 "LibTorch " TORCH_VERSION " reads up to version 10");
}

TEST(ScriptCli, NoParametersOrAForwardThatFails) {
  expect_refused("noparams", "run --model " + kData + "/tiny_noparams.pt --input 3x8x8 --target mse",
                 "has no parameters");
  // The model's own message, the interpreter error's last line, not its first ("The following
  // operation failed in the TorchScript interpreter.").
  expect_refused("bad-input", "run --model " + kConv + " --input 5x8x8 --target classes:5",
                 "fails on input [2, 5, 8, 8] (5x8x8): RuntimeError: Given groups=1, weight of size [4, 3, 3, 3], "
                 "expected input[2, 5, 8, 8] to have 3 channels, but got 5 channels instead");
}

TEST(ScriptCli, OutputThatDoesNotFitTheTarget) {
  expect_refused("misfit", "run --model " + kConv + " --input 3x8x8 --target classes:1000",
                 "output [2, 5] does not fit target classes:1000 (expected [2, 1000]");
  expect_refused("lm-misfit", "run --model " + kLm + " --input tokens:6 --target classes:16 --set vocab=16",
                 "output [2, 6, 16] does not fit target classes:16 (expected [2, 16]");
}

TEST(ScriptCli, BadFlags) {
  // Ids up to 31 reach past the 16-row embedding: the forward itself fails, and says so.
  expect_refused("lm-vocab", "run --model " + kLm + " --input tokens:6 --target next-token:32",
                 "fails on input [2, 6] (tokens:6): RuntimeError: index out of range in self");
  expect_refused("no-input", "run --model " + kConv, "needs --input");
  expect_refused("target-alone", "run --model " + kConv + " --target mse", "--target needs --input");
  expect_refused("bad-spec", "run --model " + kConv + " --input 3x8x --target mse", "is not an input spec");
}

TEST(ScriptCli, MaxbatchMemoryAndExplainRefuseAlike) {
  expect_refused("maxbatch", "maxbatch --model " + kConv + " --input 3x8x8 --target classes:7", "does not fit target");
  expect_refused("memory", "memory --model " + kConv + " --input 3x8x8 --target classes:7", "does not fit target");
  expect_refused("explain", "explain --model " + kData + "/tiny_noparams.pt --input 3x8x8 --target mse",
                 "has no parameters");
}

// A path with ':', ',', '=' and a space: the run trains, the record names the file by size and SHA-256,
// and its descriptor reruns the case.
TEST(ScriptCli, RunRecordsTheFileAndItsDescriptorReruns) {
  const auto dir = temp_dir("torchscript", "run");
  const fs::path model = dir / "my model:v1,a=b.pt";
  fs::copy_file(kConv, model);
  const auto out = dir / "r.json";
  const CmdResult r = run_trainbench(
      "run --model '" + model.string() + "' --input 3x8x8 --target classes:5 --batch 2" + kFast + " -o " + out.string(),
      dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const ResultsFile f = read_results(out.string());
  ASSERT_EQ(f.benchmarks.size(), 1u);
  const Record& rec = f.benchmarks[0];
  ASSERT_TRUE(rec.ok()) << rec.error;
  EXPECT_EQ(rec.model, kScriptModel);
  EXPECT_EQ(rec.parameters, 145);
  EXPECT_EQ(rec.params.at("file"), model.string());
  EXPECT_EQ(rec.model_file_bytes, static_cast<int64_t>(fs::file_size(kConv)));
  EXPECT_EQ(rec.model_file_sha256, digest_file(kConv).sha256);
  const auto again = dir / "again.json";
  const CmdResult rerun = run_trainbench(
      "run --case '" + rec.name + "'" + kFast.substr(kFast.find(" --warmup")) + " -o " + again.string(), dir);
  ASSERT_EQ(rerun.code, 0) << rerun.err;
  EXPECT_EQ(read_results(again.string()).benchmarks.at(0).name, rec.name);
}

// explain reads layers from the dispatched operators, so a scripted model's step is attributed to its
// convolutions, batch norms and linear layers as a built-in model's is: tiny_conv's conv 3->4 k3 pad 1
// on 8x8, its batch norm over 4 channels and its linear 4->5 on 2 samples. (The census runs the graph
// unoptimised: the optimised one decomposes batch norm and runs on detached inputs, which hid batch norm
// and read the linear layer as needing no input gradient.)
TEST(ScriptCli, ExplainAttributesTheStepToItsLayers) {
  const auto dir = temp_dir("torchscript", "explain");
  const CmdResult r = run_trainbench("explain --model " + kConv +
                                         " --input 3x8x8 --target classes:5 --batch 2 --threads 1"
                                         " --op-time 0 --min-time 0 --min-steps 2 -o " +
                                         (dir / "ex.json").string(),
                                     dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const ResultsFile f = read_results((dir / "ex.json").string());
  ASSERT_TRUE(f.explain);
  std::string ops;
  for (const auto& l : f.explain->layers) ops += l.op + " ";
  EXPECT_NE(ops.find("conv:mb2ic3ih8oc4kh3ph1 "), std::string::npos) << ops;
  EXPECT_NE(ops.find("linear:m2n5k4 "), std::string::npos) << ops;
  EXPECT_NE(ops.find("bn:mb2ic4ih8 "), std::string::npos) << ops;
  // Each layer's training FLOPs by hand, once per step: the conv's forward 2 x 2 samples x 4 x 8*8 x
  // 3*3*3 = 27648 and its weight gradient the same, no input gradient (its input is the data); the
  // linear layer's forward 2 x 2 x 5 x 4 = 80, with input and weight gradients 80 each.
  for (const auto& l : f.explain->layers) {
    if (l.op == "conv:mb2ic3ih8oc4kh3ph1") {
      EXPECT_FALSE(l.input_grad);
      EXPECT_EQ(l.count, 1);
      EXPECT_DOUBLE_EQ(l.flops, 2.0 * 27648);
    } else if (l.op == "linear:m2n5k4") {
      EXPECT_TRUE(l.input_grad);
      EXPECT_EQ(l.count, 1);
      EXPECT_DOUBLE_EQ(l.flops, 3.0 * 80);
    }
  }
}

// ---------------------------------------------------------------- user code runs in a child, never here
// The hostile fixtures of scripts/fixtures/make-test-models.py: each fits input 3x8x8 and target classes:5.
// The check of a file (load, a forward of 2 samples) runs in a child of the command under its
// --timeout and --memory-limit; before, it ran in the command's own process.

// A crafted archive (a parameter claiming 2^40 elements over 148 bytes) crashed the main process with
// a segmentation fault and nothing on stderr; now one line names the file and what happened.
TEST(ScriptUserCode, ACraftedFileThatCrashesIsOneLineNamingIt) {
  const auto dir = temp_dir("torchscript", "crafted");
  const auto out = dir / "r.json";
  const CmdResult r = run_trainbench(
      "run --model " + kData + "/tiny_crafted.pt --input 3x8x8 --target classes:5 --batch 2" + kFast + " -o " +
          out.string(),
      dir, RunWith{"", 120});
  EXPECT_TRUE(refused(r, {"TorchScript model '" + kData + "/tiny_crafted.pt'"}));
  EXPECT_FALSE(fs::exists(out));
}

// A forward that never returns: the check is killed at --timeout and says so (before, `run` hung with
// it; the outer `timeout` turns a hang into exit 124 here).
TEST(ScriptUserCode, AForwardThatNeverReturnsEndsAtTheTimeout) {
  const auto dir = temp_dir("torchscript", "hang");
  for (const std::string command : {"run --batch 2", "memory", "explain --batch 2"}) {
    const auto out = dir / "r.json";
    const CmdResult r = run_trainbench(command + " --model " + kData +
                                           "/tiny_hang.pt --input 3x8x8 --target classes:5 --timeout 3 -o " +
                                           out.string(),
                                       dir, RunWith{"", 60});
    EXPECT_TRUE(refused(r, {"tiny_hang.pt': loading it and its forward of 2 samples did not end within 3 s"}))
        << command;
    EXPECT_FALSE(fs::exists(out)) << command;
  }
}

// The model's own message reaches the user from the child that ran it.
TEST(ScriptUserCode, TheModelsOwnErrorReachesTheUser) {
  const auto dir = temp_dir("torchscript", "boom");
  const CmdResult r = run_trainbench(
      "run --model " + kData + "/tiny_boom.pt --input 3x8x8 --target classes:5 --batch 2 -o " +
          (dir / "r.json").string(),
      dir, RunWith{"", 60});
  EXPECT_TRUE(refused(r, {"fails on input [2, 3, 8, 8] (3x8x8): ", "boom from forward"}));
}

// A message of several lines ("boom from forward", "ValueError: second line", "    third line";
// scripts/fixtures/make-test-models.py) is shown by its first line, the one the model raised first: not its
// last line, nor a later one that looks like an exception's own.
TEST(ScriptUserCode, AModelsMessageOfSeveralLinesIsShownByItsFirst) {
  const auto dir = temp_dir("torchscript", "boom-lines");
  const CmdResult r =
      run_trainbench("run --model " + kData + "/tiny_boom_lines.pt --input 3x8x8 --target classes:5 --batch 2 -o " +
                         (dir / "r.json").string(),
                     dir, RunWith{"", 60});
  EXPECT_TRUE(refused(r, {"fails on input [2, 3, 8, 8] (3x8x8): ", "RuntimeError: boom from forward"}));
  EXPECT_EQ(r.err.find("second line"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("third line"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("HERE"), std::string::npos) << r.err;
}

// explain times the layers in a child of its own (`explain-layers`), not in its process, and under the
// step's --timeout: tiny_conv's 3 layers, each phase timed for at least 4 s (--op-time), need over 24 s,
// so a --timeout of 8 s, which the whole step keeps within, ends them. The step stays in the results
// file. (Before, the layers were timed in explain's own process with no time limit: exit 0 after 24 s.)
TEST(ScriptUserCode, ExplainTimesTheLayersInAChildUnderTheTimeout) {
  const auto dir = temp_dir("torchscript", "explainchild");
  const auto out = dir / "ex.json";
  const CmdResult r = run_trainbench("explain --model " + kConv +
                                         " --input 3x8x8 --target classes:5 --batch 2 --threads 1 --op-time 4"
                                         " --timeout 8 --warmup 1 --min-time 0 --min-steps 2 --max-time 1 -o " +
                                         out.string(),
                                     dir, RunWith{"", 120});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find(": timing its layers did not end within 8 s (--timeout)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("[layer 1 of 3]"), std::string::npos) << r.err;  // the child's progress, shown here
  const ResultsFile f = read_results(out.string());
  ASSERT_EQ(f.benchmarks.size(), 1u);
  EXPECT_TRUE(f.benchmarks[0].ok()) << f.benchmarks[0].error;
  EXPECT_FALSE(f.explain.has_value());
}

// A forward that fills 4 GiB per sample, under a 6 GB process limit (ulimit -v) and --memory-limit 1G:
// its check ran in the main process and allocated 8 GiB there, so the limit ended the command with
// exit 2. Now the check runs out of memory in its child, which is no fault of the file, and the case
// itself is measured and recorded as `oom`.
TEST(ScriptUserCode, AForwardBeyondTheMemoryLimitIsAnOomRow) {
  const auto dir = temp_dir("torchscript", "hog");
  const auto out = dir / "r.json";
  const int code = shell("ulimit -v 6000000 && timeout -k 5 120 " TRAINBENCH_EXE " run --model " + kData +
                         "/tiny_hog.pt --input 3x8x8 --target classes:5 --batch 2 --memory-limit 1G" + kFast +
                         " -o " + out.string() + " > " + (dir / "out.txt").string() + " 2> " +
                         (dir / "err.txt").string());
  ASSERT_EQ(code, 0) << slurp(dir / "err.txt");
  const ResultsFile f = read_results(out.string());
  ASSERT_EQ(f.benchmarks.size(), 1u);
  EXPECT_EQ(f.benchmarks[0].status, Status::oom) << f.benchmarks[0].error;
}

// In a case's own child the check is part of building the workload (ScriptCheckPlace::case_setup):
// the workload refuses an output that does not fit the target, or a module with nothing to train.
TEST(ScriptUserCode, TheWorkloadChecksWhatValidationLeftToIt) {
  try {
    (void)make_workload(script_options(kConv, "3x8x8", "classes:7", 2));
    ADD_FAILURE() << "a 5-class output trained against classes:7";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("output [2, 5] does not fit target classes:7"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW((void)make_workload(script_options(kData + "/tiny_noparams.pt", "3x8x8", "mse", 2)),
               std::invalid_argument);
}

}  // namespace
}  // namespace trainbench
