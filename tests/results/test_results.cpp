// Results: Record/Context JSON, the results file (schema pinned by tests/fixtures/results_v1.json), the
// journal, and the printers.
#include <gtest/gtest.h>

#include <map>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "results/context.h"
#include "results/journal.h"
#include "results/number_format.h"
#include "results/printer.h"
#include "results/printer_utilization.h"
#include "results/record.h"
#include "results/reporter.h"
#include "results/results_file.h"
#include "schema_doc.h"

namespace trainbench {
namespace {

namespace fs = std::filesystem;

const std::string kFixture = std::string(TRAINBENCH_TEST_DATA) + "/results_v1.json";

// A fresh directory per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            ("trainbench_results_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(path_)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  fs::path path_;
};

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Record sample_record() {
  Record r;
  r.name = "bert:L2,H128,S64:b8:bf16:cuda:1";
  r.model = "bert";
  r.params = {{"layers", "2"}, {"hidden", "128"}, {"seq_len", "64"}};
  r.batch_size = 8;
  r.device = "cuda:1";
  r.precision = "bf16";
  r.layout = "nhwc";
  r.optimizer = "adamw";
  r.forward_only = true;
  r.threads = 3;
  r.status = Status::oom;
  r.error = "CUDA out of memory, \"really\"";
  r.throughput = 1234.5678;
  r.unit = "sequences/s";
  r.step_time_s = {0.25, 0.26, 0.01, 0.24, 0.29, 0.0123, 4};
  r.samples_s = {0.24, 0.25, 0.25, 0.29};
  r.warmup_steps = 7;
  r.stop_reason = "max_time";
  r.flops_per_step = 1.5e12;
  r.achieved_gflops = 6000.125;
  r.parameters = 4385920;
  r.peak_memory_bytes = (int64_t{5} << 30) + 17;
  r.wall_time_s = 12.75;
  r.warmup_time_s = 1.5;
  r.tokens_per_s = 2500.0;
  r.step_time_s.median_noise = 0.0175;
  r.step_time_s.lag1_autocorrelation = 0.31;
  r.noise_target = 0.01;
  r.noise_target_met = false;
  r.model_flops_per_step = 1.25e12;
  r.hardware_flops_per_step = 1.625e12;
  r.mfu = 0.4375;
  r.hfu = 0.5625;
  return r;
}

// A data-parallel record: sample_record plus its `dist` object.
Record sample_dist_record() {
  Record r = sample_record();
  DistInfo d;
  d.world_size = 4;
  d.backend = "nccl";
  d.rank_step_time_s = {0.25, 0.251, 0.26, 0.249};
  d.rank_comm_share = {0.1, 0.12, 0.05, 0.11};
  d.comm_share = 0.095;
  d.comm_total_share = 0.3;
  d.bucket_bytes = 25 << 20;
  d.buckets = 5;
  d.single_process_throughput = 40.0;
  d.scaling_efficiency = 0.8;
  r.dist = d;
  return r;
}

Context sample_context() {
  Context c;
  c.trainbench_version = "0.1.0";
  c.git_revision = "abcdef123456";
  c.start_time = "2024-05-01T12:34:56Z";
  c.hostname = "host";
  c.os = "Linux 6.1 (Debian GNU/Linux 12 (bookworm))";
  c.cpu_model = "Test CPU";
  c.cpu_cores = 16;
  c.cpu_physical_cores = 8;
  c.memory_bytes = int64_t{64} << 30;
  c.libtorch_version = "2.3.0";
  c.build = "cuda";
  c.onednn_version = "3.3.6";
  c.cudnn_version = "8.9.2";
  c.miopen_version = std::nullopt;
  c.blas_library = "/usr/lib/libblas.so.3";
  c.blas_kind = "reference";
  c.threads = 16;
  c.device = "cuda:1";
  c.device_name = "Test GPU";
  c.device_memory_bytes = int64_t{80} << 30;
  return c;
}

void expect_records_equal(const Record& a, const Record& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.model, b.model);
  EXPECT_EQ(a.params, b.params);
  EXPECT_EQ(a.batch_size, b.batch_size);
  EXPECT_EQ(a.device, b.device);
  EXPECT_EQ(a.precision, b.precision);
  EXPECT_EQ(a.layout, b.layout);
  EXPECT_EQ(a.optimizer, b.optimizer);
  EXPECT_EQ(a.forward_only, b.forward_only);
  EXPECT_EQ(a.threads, b.threads);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.error, b.error);
  EXPECT_DOUBLE_EQ(a.throughput, b.throughput);
  EXPECT_EQ(a.unit, b.unit);
  EXPECT_DOUBLE_EQ(a.step_time_s.median, b.step_time_s.median);
  EXPECT_DOUBLE_EQ(a.step_time_s.mean, b.step_time_s.mean);
  EXPECT_DOUBLE_EQ(a.step_time_s.stddev, b.step_time_s.stddev);
  EXPECT_DOUBLE_EQ(a.step_time_s.min, b.step_time_s.min);
  EXPECT_DOUBLE_EQ(a.step_time_s.max, b.step_time_s.max);
  EXPECT_DOUBLE_EQ(a.step_time_s.jitter, b.step_time_s.jitter);
  EXPECT_EQ(a.step_time_s.n, b.step_time_s.n);
  // Not measured is NaN (null in JSON) on both sides.
  auto same = [](double x, double y) { return (std::isnan(x) && std::isnan(y)) || x == y; };
  EXPECT_TRUE(same(a.step_time_s.median_noise, b.step_time_s.median_noise));
  EXPECT_TRUE(same(a.step_time_s.lag1_autocorrelation, b.step_time_s.lag1_autocorrelation));
  EXPECT_TRUE(same(a.noise_target, b.noise_target));
  EXPECT_EQ(a.noise_target_met, b.noise_target_met);
  EXPECT_EQ(a.samples_s, b.samples_s);
  EXPECT_EQ(a.warmup_steps, b.warmup_steps);
  EXPECT_EQ(a.stop_reason, b.stop_reason);
  EXPECT_DOUBLE_EQ(a.flops_per_step, b.flops_per_step);
  EXPECT_DOUBLE_EQ(a.achieved_gflops, b.achieved_gflops);
  EXPECT_EQ(a.parameters, b.parameters);
  EXPECT_EQ(a.peak_memory_bytes, b.peak_memory_bytes);
  EXPECT_DOUBLE_EQ(a.wall_time_s, b.wall_time_s);
  EXPECT_DOUBLE_EQ(a.warmup_time_s, b.warmup_time_s);
  EXPECT_DOUBLE_EQ(a.tokens_per_s, b.tokens_per_s);
  EXPECT_DOUBLE_EQ(a.model_flops_per_step, b.model_flops_per_step);
  EXPECT_DOUBLE_EQ(a.hardware_flops_per_step, b.hardware_flops_per_step);
  EXPECT_TRUE(same(a.mfu, b.mfu));
  EXPECT_TRUE(same(a.hfu, b.hfu));
}

std::set<std::string> keys_of(const nlohmann::json& j) {
  std::set<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.insert(k);
  return keys;
}

// Expects `f` to throw ResultsError with every one of `parts` in its one-line message.
template <class F>
void expect_results_error(F&& f, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "no ResultsError thrown";
  } catch (const ResultsError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    for (const auto& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
  }
}

// ---------------------------------------------------------------- Record JSON

TEST(ResultsRecord, JsonRoundTripKeepsEveryField) {
  const Record r = sample_record();
  const nlohmann::json j = to_json(r);
  // Through text too, as a file would.
  const Record back = record_from_json(nlohmann::json::parse(j.dump()));
  expect_records_equal(r, back);
  EXPECT_EQ(j["status"], "oom");
  EXPECT_EQ(j["params"]["layers"], "2");
  EXPECT_EQ(j["step_time_s"]["n"], 4);
  // The ADL hooks give the same result.
  nlohmann::json k = r;
  EXPECT_EQ(k, j);
  expect_records_equal(r, k.get<Record>());
}

TEST(ResultsRecord, DistRoundTripsAndIsNullWithoutIt) {
  const Record r = sample_dist_record();
  const Record back = record_from_json(nlohmann::json::parse(to_json(r).dump()));
  ASSERT_TRUE(back.dist.has_value());
  EXPECT_EQ(back.dist->world_size, 4);
  EXPECT_EQ(back.dist->backend, "nccl");
  EXPECT_EQ(back.dist->rank_step_time_s, r.dist->rank_step_time_s);
  EXPECT_EQ(back.dist->rank_comm_share, r.dist->rank_comm_share);
  EXPECT_DOUBLE_EQ(back.dist->comm_share, 0.095);
  EXPECT_DOUBLE_EQ(back.dist->comm_total_share, 0.3);
  EXPECT_EQ(back.dist->bucket_bytes, 25 << 20);
  EXPECT_EQ(back.dist->buckets, 5);
  EXPECT_DOUBLE_EQ(back.dist->single_process_throughput, 40.0);
  EXPECT_DOUBLE_EQ(back.dist->scaling_efficiency, 0.8);
  EXPECT_TRUE(to_json(sample_record())["dist"].is_null());
  // Written before data parallelism: no "dist" key at all still reads, as a one-process case.
  auto old = to_json(sample_record());
  old.erase("dist");
  EXPECT_FALSE(record_from_json(old).dist.has_value());
  // A mistyped nested key is named with its path.
  auto bad = to_json(r);
  bad["dist"]["buckets"] = "five";
  try {
    record_from_json(bad);
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("dist.buckets"), std::string::npos) << e.what();
  }
}

TEST(ResultsContext, OldContextWithoutWorldSizeReadsAsOneProcess) {
  auto j = to_json(sample_context());
  EXPECT_EQ(j["world_size"], 1);
  EXPECT_TRUE(j["dist_backend"].is_null());
  j.erase("world_size");
  j.erase("dist_backend");
  const Context c = context_from_json(j);
  EXPECT_EQ(c.world_size, 1);
  EXPECT_FALSE(c.dist_backend.has_value());
  Context d = sample_context();
  d.world_size = 8;
  d.dist_backend = "gloo";
  const Context back = context_from_json(nlohmann::json::parse(to_json(d).dump()));
  EXPECT_EQ(back.world_size, 8);
  EXPECT_EQ(back.dist_backend, std::optional<std::string>("gloo"));
}

TEST(ResultsRecord, EmptyParamsIsAnObject) {
  Record r;
  const auto j = to_json(r);
  ASSERT_TRUE(j.contains("params"));
  EXPECT_TRUE(j["params"].is_object());
  EXPECT_NE(j.dump().find("\"params\":{}"), std::string::npos) << j.dump();
}

TEST(ResultsRecord, StatusStrings) {
  for (Status s : {Status::ok, Status::oom, Status::error}) EXPECT_EQ(status_from_string(to_string(s)), s);
  EXPECT_THROW(status_from_string("fine"), std::invalid_argument);
}

TEST(ResultsRecord, NonFiniteNumbersBecomeNullAndReadBackAsNaN) {
  Record r = sample_record();
  r.throughput = std::nan("");
  const auto j = nlohmann::json::parse(to_json(r).dump());
  EXPECT_TRUE(j["throughput"].is_null());
  EXPECT_TRUE(std::isnan(record_from_json(j).throughput));
}

// A file written before MFU existed reads as "not a language model": 0 FLOPs, null utilisation.
TEST(ResultsRecord, FileWithoutMfuFieldsReadsAsUndefined) {
  auto j = to_json(sample_record());
  for (const char* k : {"model_flops_per_step", "hardware_flops_per_step", "mfu", "hfu"}) j.erase(k);
  const Record r = record_from_json(j);
  EXPECT_EQ(r.model_flops_per_step, 0.0);
  EXPECT_EQ(r.hardware_flops_per_step, 0.0);
  EXPECT_TRUE(std::isnan(r.mfu));
  EXPECT_TRUE(std::isnan(r.hfu));
  j["mfu"] = -0.5;  // no measurement gives a negative utilisation
  EXPECT_THROW(record_from_json(j), std::runtime_error);
}

TEST(ResultsRecord, MissingOrMistypedFieldIsNamed) {
  auto j = to_json(sample_record());
  j.erase("throughput");
  try {
    record_from_json(j);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("throughput"), std::string::npos) << e.what();
  }
  j = to_json(sample_record());
  j["step_time_s"].erase("median");
  try {
    record_from_json(j);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("step_time_s.median"), std::string::npos) << e.what();
  }
  j = to_json(sample_record());
  j["batch_size"] = "eight";
  try {
    record_from_json(j);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("batch_size"), std::string::npos) << e.what();
  }
  j = to_json(sample_record());
  j["status"] = "crashed";
  EXPECT_THROW(record_from_json(j), std::runtime_error);
}

// ---------------------------------------------------------------- Context

TEST(Context, JsonRoundTrip) {
  const Context c = sample_context();
  const Context back = context_from_json(nlohmann::json::parse(to_json(c).dump()));
  EXPECT_EQ(to_json(back), to_json(c));
  EXPECT_EQ(back.cudnn_version, std::optional<std::string>("8.9.2"));
  EXPECT_FALSE(back.miopen_version.has_value());
  EXPECT_EQ(back.cpu_physical_cores, std::optional<int>(8));
  EXPECT_EQ(back.device_memory_bytes, std::optional<int64_t>(int64_t{80} << 30));
}


// ---------------------------------------------------------------- Results file

TEST(ResultsFile, ReadsTheV1Fixture) {
  const ResultsFile f = read_results(kFixture);
  EXPECT_EQ(f.schema_version, 1);
  EXPECT_EQ(f.context.hostname, "bench-host");
  EXPECT_EQ(f.context.cpu_cores, 8);
  EXPECT_EQ(f.context.memory_bytes, 25275990016);
  EXPECT_EQ(f.context.onednn_version, std::optional<std::string>("2.6.3"));
  EXPECT_FALSE(f.context.cudnn_version.has_value());
  EXPECT_EQ(f.context.blas_kind, "openblas");
  ASSERT_EQ(f.benchmarks.size(), 3u);

  const Record& ok = f.benchmarks[0];
  EXPECT_EQ(ok.name, "resnet50:b32:fp32:nchw:cpu");
  EXPECT_EQ(ok.status, Status::ok);
  EXPECT_EQ(ok.batch_size, 32);
  EXPECT_DOUBLE_EQ(ok.throughput, 12.5);
  EXPECT_DOUBLE_EQ(ok.step_time_s.median, 2.56);
  EXPECT_EQ(ok.step_time_s.n, 5);
  EXPECT_EQ(ok.samples_s, (std::vector<double>{2.54, 2.56, 2.55, 2.66, 2.59}));
  EXPECT_EQ(ok.stop_reason, "converged");
  EXPECT_EQ(ok.parameters, 25557032);
  EXPECT_EQ(ok.peak_memory_bytes, 6442450944);
  EXPECT_TRUE(ok.params.empty());

  const Record& oom = f.benchmarks[1];
  EXPECT_EQ(oom.status, Status::oom);
  EXPECT_EQ(oom.model, "bert");
  EXPECT_EQ(oom.unit, "sequences/s");
  EXPECT_EQ(oom.params.at("seq_len"), "200");
  EXPECT_EQ(oom.optimizer, "adam");

  const Record& err = f.benchmarks[2];
  EXPECT_EQ(err.status, Status::error);
  EXPECT_TRUE(err.forward_only);
  EXPECT_EQ(err.error, "bf16 is not supported on this CPU, says \"mkldnn\"");
}

TEST(ResultsFile, WrittenKeysAreExactlyTheDocumentedSchema) {
  ResultsFile f;
  f.context = sample_context();
  f.benchmarks = {sample_record()};
  const auto j = nlohmann::json::parse(results_to_string(f));
  EXPECT_EQ(keys_of(j), (std::set<std::string>{"schema_version", "context", "benchmarks"}));
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(keys_of(j["context"]), (std::set<std::string>{"trainbench_version",
                                                          "git_revision",
                                                          "start_time",
                                                          "hostname",
                                                          "os",
                                                          "cpu_model",
                                                          "cpu_cores",
                                                          "cpu_physical_cores",
                                                          "memory_bytes",
                                                          "libtorch_version",
                                                          "build",
                                                          "onednn_version",
                                                          "cudnn_version",
                                                          "miopen_version",
                                                          "blas_library",
                                                          "blas_kind",
                                                          "threads",
                                                          "device",
                                                          "device_name",
                                                          "device_memory_bytes",
                                                          "cpu_allocator",
                                                          "peak",
                                                          "gpu_count",
                                                          "gpu_sm_count",
                                                          "gpu_arch",
                                                          "gpu_driver_version",
                                                          "gpu_runtime_version",
                                                          "world_size",
                                                          "dist_backend",
                                                          "dist_launcher",
                                                          "dist_nodes",
                                                          "resume_note",
                                                          "cuda_build_version",
                                                          "nccl_version"}));
  ASSERT_EQ(j["benchmarks"].size(), 1u);
  EXPECT_EQ(keys_of(j["benchmarks"][0]), (std::set<std::string>{"name",
                                                                "model",
                                                                "params",
                                                                "batch_size",
                                                                "device",
                                                                "precision",
                                                                "layout",
                                                                "optimizer",
                                                                "forward_only",
                                                                "threads",
                                                                "status",
                                                                "error",
                                                                "throughput",
                                                                "unit",
                                                                "step_time_s",
                                                                "samples_s",
                                                                "warmup_steps",
                                                                "stop_reason",
                                                                "flops_per_step",
                                                                "achieved_gflops",
                                                                "percent_of_peak",
                                                                "parameters",
                                                                "peak_memory_bytes",
                                                                "wall_time_s",
                                                                "warmup_time_s",
                                                                "tokens_per_s",
                                                                "peak_reserved_bytes",
                                                                "tf32",
                                                                "algorithm_search",
                                                                "skipped_steps",
                                                                "loss_scale",
                                                                "mean_sm_clock_mhz",
                                                                "throttled_samples",
                                                                "dist",
                                                                "noise_target",
                                                                "noise_target_met",
                                                                "still_settling",
                                                                "memory_limit_bytes",
                                                                "energy_j_per_sample",
                                                                "mean_power_w",
                                                                "energy_source",
                                                                "model_flops_per_step",
                                                                "hardware_flops_per_step",
                                                                "mfu",
                                                                "hfu",
                                                                "data",
                                                                "memory"}));
  EXPECT_EQ(keys_of(j["benchmarks"][0]["step_time_s"]),
            (std::set<std::string>{"median", "mean", "stddev", "min", "max", "jitter", "n", "median_noise",
                                   "lag1_autocorrelation"}));
  // The fixture uses the same keys, so it documents the schema as written.
  const auto fixture = nlohmann::json::parse(read_text(kFixture));
  EXPECT_EQ(keys_of(fixture["context"]), keys_of(j["context"]));
  for (const auto& b : fixture["benchmarks"]) EXPECT_EQ(keys_of(b), keys_of(j["benchmarks"][0]));
}

TEST(ResultsFile, WrittenKeysAreTheKeysDocumentedInJsonSchemaMd) {
  ResultsFile f;
  f.context = sample_context();
  f.benchmarks = {sample_dist_record()};
  f.benchmarks[0].data = DataInfo{};
  f.benchmarks[0].memory = MemoryInfo{};
  // Written only for TorchScript models (a file named): set, so they are among the written keys.
  f.benchmarks[0].model_file_bytes = 1;
  f.benchmarks[0].model_file_sha256 = std::string(64, 'a');
  // Written only for predictions: set, so its keys are among the written ones.
  f.benchmarks[0].prediction = PredictionInfo{};
  const auto j = to_json(f);
  EXPECT_EQ(documented_keys("context"), keys_of(j["context"]));
  std::set<std::string> written = keys_of(j["benchmarks"][0]);
  for (const auto& k : keys_of(j["benchmarks"][0]["step_time_s"])) written.insert("step_time_s." + k);
  for (const auto& k : keys_of(j["benchmarks"][0]["dist"])) written.insert("dist." + k);
  for (const auto& k : keys_of(j["benchmarks"][0]["data"])) written.insert("data." + k);
  for (const auto& k : keys_of(j["benchmarks"][0]["memory"])) written.insert("memory." + k);
  for (const auto& k : keys_of(j["benchmarks"][0]["prediction"])) written.insert("prediction." + k);
  EXPECT_EQ(documented_keys("benchmarks[]"), written);
}

// Keys of `j`, and "ARRAY[].key" for the keys of the first object of each array-of-objects value.
std::set<std::string> flat_keys(const nlohmann::json& j, const std::string& prefix = "") {
  std::set<std::string> keys;
  for (const auto& [k, v] : j.items()) {
    keys.insert(prefix + k);
    if (v.is_array() && !v.empty() && v[0].is_object())
      for (const auto& sub : flat_keys(v[0], prefix + k + "[].")) keys.insert(sub);
  }
  return keys;
}

TEST(ResultsFile, LayerLevelKeysAreTheKeysDocumentedInJsonSchemaMd) {
  ResultsFile f;
  f.context = sample_context();
  PeakInfo peak;
  peak.gemm_gflops["fp32"] = 100.0;
  f.context.peak = peak;
  OpRecord op;
  op.status = Status::ok;
  op.phases.push_back(OpPhaseRecord{"fwd", {}, {0.1}, 1e9, 10.0, "converged"});
  f.ops = {op};
  Explanation e;
  ExplainLayer layer;
  layer.alternatives.push_back(ExplainAlternative{"bf16", "nchw", Status::ok, "", 0.1, 2.0});
  e.layers = {layer};
  f.explain = e;
  const auto j = to_json(f);
  EXPECT_EQ(keys_of(j), (std::set<std::string>{"schema_version", "context", "benchmarks", "ops", "explain"}));
  EXPECT_EQ(documented_keys("peak"), keys_of(j["context"]["peak"]));
  EXPECT_EQ(documented_keys("ops[]"), flat_keys(j["ops"][0]));
  EXPECT_EQ(documented_keys("explain"), flat_keys(j["explain"]));
}

TEST(ResultsFile, AtomicWriteRoundTripsAndLeavesNoTempFile) {
  TempDir dir;
  const std::string path = dir.file("out.json");
  write_text(path, "old contents");
  ResultsFile f = read_results(kFixture);
  write_results_atomic(path, f);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"out.json"});
  const std::string text = read_text(path);
  EXPECT_NE(text.find("\n  \"benchmarks\": ["), std::string::npos) << "indent 2 expected";
  EXPECT_EQ(text.back(), '\n');
  const ResultsFile back = read_results(path);
  EXPECT_EQ(to_json(back), to_json(f));
  for (size_t i = 0; i < f.benchmarks.size(); ++i) expect_records_equal(back.benchmarks[i], f.benchmarks[i]);
}

TEST(ResultsFile, AtomicWriteIntoMissingDirectoryFailsCleanly) {
  TempDir dir;
  const std::string path = dir.file("no/such/dir/out.json");
  expect_results_error([&] { write_results_atomic(path, ResultsFile{}); }, {path});
  EXPECT_TRUE(dir.entries().empty());
}

TEST(ResultsFile, BadFilesGiveOneLineNamingTheFile) {
  TempDir dir;
  const std::string missing = dir.file("missing.json");
  expect_results_error([&] { read_results(missing); }, {"missing.json", "no such file"});

  const std::string empty = dir.file("empty.json");
  write_text(empty, "");
  expect_results_error([&] { read_results(empty); }, {"empty.json", "empty"});

  const std::string truncated = dir.file("truncated.json");
  const std::string full = read_text(kFixture);
  write_text(truncated, full.substr(0, full.size() / 2));
  expect_results_error([&] { read_results(truncated); }, {"truncated.json", "not valid JSON"});

  const std::string foreign = dir.file("foreign.json");
  write_text(foreign, R"({"foo":1})");
  expect_results_error([&] { read_results(foreign); }, {"foreign.json", "not a trainbench results file"});

  const std::string future = dir.file("future.json");
  auto j = nlohmann::json::parse(full);
  j["schema_version"] = 7;
  write_text(future, j.dump());
  expect_results_error([&] { read_results(future); },
                       {"future.json", "schema_version 7 is not supported (this trainbench reads 1)"});

  const std::string bad_field = dir.file("bad_field.json");
  j = nlohmann::json::parse(full);
  j["benchmarks"][1].erase("unit");
  write_text(bad_field, j.dump());
  expect_results_error([&] { read_results(bad_field); }, {"bad_field.json", "benchmarks[1]", "unit"});

  const std::string bad_context = dir.file("bad_context.json");
  j = nlohmann::json::parse(full);
  j["context"]["cpu_cores"] = "many";
  write_text(bad_context, j.dump());
  expect_results_error([&] { read_results(bad_context); }, {"bad_context.json", "context", "cpu_cores"});
}

// ---------------------------------------------------------------- Journal

TEST(Journal, AppendThenReadKeepsHeaderContextAndRecords) {
  TempDir dir;
  const std::string path = journal_path_for(dir.file("out.json"));
  EXPECT_EQ(path, dir.file("out.json") + ".journal");
  Record a = sample_record();
  Record b = sample_record();
  b.name = "second";
  b.status = Status::ok;
  {
    Journal j;
    j.open(path, sample_context());
    j.append(a);
    j.append(b);
    // Each append is on disk at once: readable before close.
    const auto mid = read_journal(path);
    EXPECT_EQ(mid.records.size(), 2u);
  }
  const std::string text = read_text(path);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3);
  EXPECT_EQ(text.rfind("{\"context\":", 0), 0u) << "header first";  // keys sort: context, journal
  const auto contents = read_journal(path);
  ASSERT_TRUE(contents.context.has_value());
  EXPECT_EQ(to_json(*contents.context), to_json(sample_context()));
  ASSERT_EQ(contents.records.size(), 2u);
  expect_records_equal(contents.records[0], a);
  expect_records_equal(contents.records[1], b);
}

TEST(Journal, TruncatedLastLineIsSkippedAndResumeCutsIt) {
  TempDir dir;
  const std::string path = dir.file("out.json.journal");
  {
    Journal j;
    j.open(path, sample_context());
    j.append(sample_record());
  }
  // A kill mid-write leaves half a line without its newline.
  const std::string torn = to_json(sample_record()).dump().substr(0, 40);
  write_text(path, read_text(path) + torn);
  auto contents = read_journal(path);
  EXPECT_TRUE(contents.context.has_value());
  EXPECT_EQ(contents.records.size(), 1u);

  // Resuming keeps the header and the finished record, drops the torn line and appends cleanly.
  Context other = sample_context();
  other.hostname = "elsewhere";
  Record next = sample_record();
  next.name = "after resume";
  {
    Journal j;
    j.open(path, other, Journal::Mode::resume);
    j.append(next);
  }
  contents = read_journal(path);
  ASSERT_TRUE(contents.context.has_value());
  EXPECT_EQ(contents.context->hostname, "host") << "resume keeps the original context";
  ASSERT_EQ(contents.records.size(), 2u);
  EXPECT_EQ(contents.records[1].name, "after resume");

  // A fresh open starts over.
  {
    Journal j;
    j.open(path, other, Journal::Mode::fresh);
  }
  contents = read_journal(path);
  EXPECT_EQ(contents.context->hostname, "elsewhere");
  EXPECT_TRUE(contents.records.empty());
}

TEST(Journal, GarbageInTheMiddleThrowsWithLineNumber) {
  TempDir dir;
  const std::string path = dir.file("bad.journal");
  {
    Journal j;
    j.open(path, sample_context());
    j.append(sample_record());
  }
  write_text(path, read_text(path) + "this is not json\n" + to_json(sample_record()).dump() + "\n");
  expect_results_error([&] { read_journal(path); }, {"bad.journal:3", "not valid JSON"});
  expect_results_error([&] { read_journal(dir.file("none.journal")); }, {"none.journal", "no such file"});
}

TEST(Journal, JournalWithoutHeaderHasNoContext) {
  TempDir dir;
  const std::string path = dir.file("plain.journal");
  write_text(path, to_json(sample_record()).dump() + "\n");
  const auto contents = read_journal(path);
  EXPECT_FALSE(contents.context.has_value());
  EXPECT_EQ(contents.records.size(), 1u);
}

// ---------------------------------------------------------------- Printers

TEST(Printer, FormatNames) {
  EXPECT_EQ(find_reporter("table").name, "table");
  EXPECT_EQ(find_reporter("md").name, "md");
  EXPECT_EQ(find_reporter("csv").name, "csv");
  EXPECT_EQ(find_reporter("json").name, "json");
  for (const auto& r : reporters()) EXPECT_EQ(&find_reporter(r.name), &r);
  try {
    find_reporter("xml");
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("xml"), std::string::npos) << e.what();
  }
}

TEST(Printer, ThreeSignificantFigures) {
  EXPECT_EQ(format_significant(12345.0), "12300");
  EXPECT_EQ(format_significant(1234.5678), "1230");
  EXPECT_EQ(format_significant(3.14159), "3.14");
  EXPECT_EQ(format_significant(0.0012345), "0.00123");
  EXPECT_EQ(format_significant(999.6), "1000");
  EXPECT_EQ(format_significant(9.996), "10.0");
  EXPECT_EQ(format_significant(0.0), "0");
  EXPECT_EQ(format_significant(std::nan("")), "-");
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(1536), "1.50 KiB");
  EXPECT_EQ(format_bytes(int64_t{6} << 30), "6.00 GiB");
  EXPECT_EQ(format_bytes(300 * 1024 * 1024), "300 MiB");
}

TEST(Printer, TableShowsDashForOomAndReasonForError) {
  const ResultsFile f = read_results(kFixture);
  const std::string ok_row = table_row(f.benchmarks[0]);
  EXPECT_NE(ok_row.find("12.5 images/s"), std::string::npos) << ok_row;
  EXPECT_NE(ok_row.find("2560"), std::string::npos) << "median ms: " << ok_row;
  EXPECT_NE(ok_row.find("1.16%"), std::string::npos) << "jitter: " << ok_row;
  EXPECT_NE(ok_row.find("307"), std::string::npos) << "GFLOP/s: " << ok_row;
  EXPECT_NE(ok_row.find("6.00 GiB"), std::string::npos) << ok_row;

  const std::string oom_row = table_row(f.benchmarks[1]);
  EXPECT_NE(oom_row.find(" - "), std::string::npos) << oom_row;
  EXPECT_EQ(oom_row.find("sequences/s"), std::string::npos) << "no throughput for oom: " << oom_row;
  EXPECT_NE(oom_row.find("oom"), std::string::npos);
  EXPECT_NE(oom_row.find("bert:L12,H768,S200 "), std::string::npos) << "descriptor's model part: " << oom_row;
  Record unnamed = f.benchmarks[1];
  unnamed.name = "x";
  EXPECT_NE(table_row(unnamed).find("bert hidden=768,layers=12,seq_len=200"), std::string::npos);

  Record err = f.benchmarks[2];
  err.error = std::string(200, 'x');
  const std::string err_row = table_row(err);
  EXPECT_NE(err_row.find("error: xxx"), std::string::npos) << err_row;
  EXPECT_NE(err_row.find("..."), std::string::npos) << "long reasons are cut: " << err_row;
  EXPECT_LT(err_row.size(), 250u);

  // The whole table is the header plus the same rows, which line up.
  const std::string table = print_table(f.benchmarks);
  EXPECT_EQ(table, table_header() + table_row(f.benchmarks[0]) + oom_row + table_row(f.benchmarks[2]));
  const auto status_at = detail::display_width(table_header().substr(0, table_header().find("status")));
  const auto ok_prefix = ok_row.substr(0, ok_row.rfind("ok"));
  EXPECT_EQ(detail::display_width(ok_prefix), status_at) << table;
  EXPECT_EQ(detail::display_width(oom_row.substr(0, oom_row.rfind("oom"))), status_at) << table;
}

TEST(Printer, RowsThatMissedTheNoiseTargetAreMarkedWithAFooter) {
  const ResultsFile f = read_results(kFixture);
  Record met = f.benchmarks[0];
  met.noise_target = 0.02;
  met.noise_target_met = true;
  Record missed = met;
  missed.name = "resnet50:b64:fp32:nchw:cpu";
  missed.noise_target_met = false;
  missed.stop_reason = "max_time";
  // The fixture's steps: jitter 0.0296 s, median 2.56 s, n 5 -> noise 1.2533 * 0.0296 / sqrt(5) / 2.56 = 0.648%.
  const std::string met_row = table_row(met);
  EXPECT_NE(met_row.find("0.648%"), std::string::npos) << met_row;
  EXPECT_EQ(met_row.find("0.648%!"), std::string::npos) << met_row;
  EXPECT_NE(table_row(missed).find("0.648%!"), std::string::npos) << table_row(missed);

  EXPECT_EQ(noise_footer({met, f.benchmarks[1]}), "") << "nothing missed, no footer";
  const std::string table = print_table({met, missed, f.benchmarks[1]});
  EXPECT_NE(table.find("! 1 of 3 row(s) stopped on a limit before the median's noise reached the 2% target: raise "
                       "--max-time"),
            std::string::npos)
      << table;
  Record by_steps = missed;
  by_steps.stop_reason = "max_steps";
  EXPECT_NE(noise_footer({missed, by_steps}).find("raise --max-time or raise --max-steps"), std::string::npos);
  EXPECT_NE(print_markdown({missed}).find("\n! 1 of 1 row(s)"), std::string::npos);
  // A row that began measuring before its steps settled: the footer names both causes (a fixed warm-up,
  // --max-time) and never tells a user who gave no --warmup to drop it.
  Record settling = met;
  settling.still_settling = true;
  EXPECT_EQ(settling_footer({met}), "");
  const std::string settled = settling_footer({settling, met});
  EXPECT_NE(settled.find("! 1 of 2 row(s) began measuring before the step time settled"), std::string::npos);
  EXPECT_NE(settled.find("leave the warm-up unset"), std::string::npos) << settled;
  EXPECT_EQ(settled.find("drop --warmup"), std::string::npos) << settled;
  // Old files (no field) and failed rows are never marked.
  Record old = met;
  old.noise_target_met.reset();
  EXPECT_EQ(table_row(old).find("%!"), std::string::npos);

  const std::string csv = print_csv({missed});
  EXPECT_NE(csv.find(",noise_target,noise_target_met,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",0.02,false,"), std::string::npos) << csv;
}

TEST(Printer, TableWithContextStartsWithTheMachine) {
  const ResultsFile f = read_results(kFixture);
  const std::string out = print_records("table", f);
  EXPECT_EQ(out.rfind("cpu: Intel(R) Xeon(R) Processor", 0), 0u) << out;
  EXPECT_NE(out.find("BLAS openblas"), std::string::npos);
}

TEST(Printer, MarkdownHasHeaderSeparatorAndOneLinePerRecord) {
  const ResultsFile f = read_results(kFixture);
  const std::string md = print_markdown(f.benchmarks);
  std::istringstream in(md);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 2u + f.benchmarks.size());
  EXPECT_EQ(lines[0].rfind("| model | batch |", 0), 0u) << lines[0];
  EXPECT_EQ(lines[1].rfind("| --- | ---: |", 0), 0u) << lines[1];
  const auto pipes = [](const std::string& s) { return std::count(s.begin(), s.end(), '|'); };
  for (const auto& l : lines) EXPECT_EQ(pipes(l), pipes(lines[0])) << l;
  Record r = f.benchmarks[2];
  r.error = "a|b";
  EXPECT_NE(print_markdown({r}).find("a\\|b"), std::string::npos);
}

TEST(Printer, CsvQuotesFieldsWithCommasAndQuotes) {
  const ResultsFile f = read_results(kFixture);
  const std::string csv = print_csv(f.benchmarks);
  std::istringstream in(csv);
  std::string header;
  std::getline(in, header);
  EXPECT_EQ(header.rfind("name,model,params,batch_size,", 0), 0u) << header;
  EXPECT_NE(header.find("step_time_median_s"), std::string::npos);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 4);
  // The bert descriptor has commas; the error has commas and quotes.
  EXPECT_NE(csv.find("\"bert:L12,H768,S200:b256:fp32:cpu\",bert,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\"bf16 is not supported on this CPU, says \"\"mkldnn\"\"\""), std::string::npos) << csv;
  EXPECT_NE(csv.find("resnet50:b32:fp32:nchw:cpu,resnet50,,32,cpu,fp32,nchw,sgd,false,8,ok,,12.5,images/s,0,2.56,"),
            std::string::npos)
      << csv;
}

// One CSV row as a map from the header's column names (the rows here have no quoted cells).
std::map<std::string, std::string> csv_cells(const std::string& csv, size_t row) {
  std::istringstream in(csv);
  std::vector<std::vector<std::string>> lines;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells;
    std::istringstream cs(line);
    for (std::string c; std::getline(cs, c, ',');) cells.push_back(c);
    if (!line.empty() && line.back() == ',') cells.emplace_back();  // getline drops a last empty cell
    lines.push_back(cells);
  }
  std::map<std::string, std::string> out;
  EXPECT_EQ(lines.at(0).size(), lines.at(row + 1).size());
  for (size_t i = 0; i < lines[0].size() && i < lines[row + 1].size(); ++i) out[lines[0][i]] = lines[row + 1][i];
  return out;
}

TEST(Printer, CsvHasTheMemoryAndUtilizationColumnsEmptyWhereNotMeasured) {
  Record gpt;
  gpt.name = "gpt:b2:bf16:cpu";
  gpt.status = Status::ok;
  gpt.precision = "bf16";
  gpt.model_flops_per_step = 3.5e12;
  gpt.hardware_flops_per_step = 4.5e12;
  gpt.mfu = 0.25;
  gpt.hfu = 0.32;
  MemoryInfo m;
  m.peak_bytes = 1000;
  m.parameters_bytes = 100;
  m.gradients_bytes = 104;
  m.optimizer_bytes = 200;
  m.fixed_bytes = 404;
  m.activations_bytes_per_sample = 298.0;
  m.max_rss_bytes = 5000;
  gpt.memory = m;
  Record old;  // a record from a file written before these fields: no memory, no model FLOPs
  old.name = "resnet50:b32:fp32:nchw:cpu";
  const std::string csv = print_csv({gpt, old});
  const auto a = csv_cells(csv, 0);
  // Doubles are written in their shortest round-trip form: read back, they are the same numbers.
  EXPECT_EQ(std::stod(a.at("model_flops_per_step")), 3.5e12);
  EXPECT_EQ(std::stod(a.at("hardware_flops_per_step")), 4.5e12);
  EXPECT_EQ(std::stod(a.at("mfu")), 0.25);
  EXPECT_EQ(std::stod(a.at("hfu")), 0.32);
  EXPECT_EQ(a.at("memory_peak_bytes"), "1000");
  EXPECT_EQ(a.at("memory_parameters_bytes"), "100");
  EXPECT_EQ(a.at("memory_gradients_bytes"), "104");
  EXPECT_EQ(a.at("memory_optimizer_bytes"), "200");
  EXPECT_EQ(a.at("memory_fixed_bytes"), "404");
  EXPECT_EQ(std::stod(a.at("memory_activations_bytes_per_sample")), 298.0);
  EXPECT_EQ(a.at("memory_max_rss_bytes"), "5000");
  const auto b = csv_cells(csv, 1);
  for (const char* k : {"model_flops_per_step", "hardware_flops_per_step", "mfu", "hfu", "memory_peak_bytes",
                        "memory_parameters_bytes", "memory_activations_bytes_per_sample", "memory_max_rss_bytes"}) {
    EXPECT_EQ(b.at(k), "") << k;
  }
  EXPECT_EQ(b.at("name"), "resnet50:b32:fp32:nchw:cpu");
}

// The copy and transfer of a real-data row and the file of a TorchScript row are CSV columns too, empty
// in rows that have neither (synthetic data, a built-in model).
TEST(Printer, CsvHasTheDataCopyAndModelFileColumns) {
  Record script;
  script.name = "script:b2:fp32:nchw:cpu";  // no comma: csv_cells reads unquoted cells
  script.status = Status::ok;
  script.model_file_bytes = 8811;
  script.model_file_sha256 = std::string(64, 'a');
  DataInfo d;
  d.source = "/data/train";
  d.median_copy_s = 0.25;
  d.transfer = "uint8";
  script.data = d;
  Record plain;
  plain.name = "resnet50:b32:fp32:nchw:cpu";
  const std::string csv = print_csv({script, plain});
  const auto a = csv_cells(csv, 0);
  EXPECT_EQ(std::stod(a.at("data_median_copy_s")), 0.25);
  EXPECT_EQ(a.at("data_transfer"), "uint8");
  EXPECT_EQ(a.at("model_file_bytes"), "8811");
  EXPECT_EQ(a.at("model_file_sha256"), std::string(64, 'a'));
  const auto b = csv_cells(csv, 1);
  for (const char* k : {"data_median_copy_s", "data_transfer", "model_file_bytes", "model_file_sha256"}) {
    EXPECT_EQ(b.at(k), "") << k;
  }
}

TEST(Printer, MfuIsAFooterLineOnlyForRowsThatHaveIt) {
  Record gpt;
  gpt.name = "gpt:b2:bf16:cpu";
  gpt.status = Status::ok;
  gpt.precision = "bf16";
  gpt.mfu = 0.25;
  gpt.hfu = 0.32;
  Record cnn = gpt;
  cnn.name = "resnet50:b32:fp32:nchw:cpu";
  cnn.mfu = cnn.hfu = std::nan("");
  const std::string table = print_table({gpt, cnn});
  // Three significant figures, as every number in the table.
  EXPECT_NE(table.find(
                "gpt:b2:bf16:cpu: MFU 25.0%, HFU 32.0% (model FLOP/s by the PaLM formula over the measured bf16 peak)"),
            std::string::npos)
      << table;
  EXPECT_EQ(table.find("resnet50:b32:fp32:nchw:cpu: MFU"), std::string::npos) << table;
  EXPECT_NE(print_markdown({gpt}).find("MFU 25.0%"), std::string::npos);
  EXPECT_EQ(utilization_footer({cnn}), "");
  Record failed = gpt;
  failed.status = Status::oom;
  EXPECT_EQ(utilization_footer({failed}), "") << "a failed row measured nothing";
}

TEST(Printer, JsonIsTheResultsFile) {
  const ResultsFile f = read_results(kFixture);
  const std::string json = print_records("json", f);
  EXPECT_EQ(json, results_to_string(f));
  EXPECT_EQ(to_json(results_from_string(json, "<printed>")), to_json(f));
}

}  // namespace
}  // namespace trainbench
