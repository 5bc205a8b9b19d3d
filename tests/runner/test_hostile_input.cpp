// One test per class of hostile input (issue 12): each rule alone, without running a model. The CLI
// tests with real processes are in test_hostile_cli.cpp.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>

#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "core/input_file.h"
#include "core/value_rules.h"
#include "data/data_error.h"
#include "data/source_check.h"
#include "ops/peak.h"
#include "report/compare.h"
#include "report/html_report.h"
#include "results/journal.h"
#include "results/memory_info.h"
#include "results/op_record.h"
#include "results/number_format.h"
#include "results/results_file.h"
#include "cases/case.h"
#include "runner/plan.h"
#include "runner/suite.h"
#include "workloads/registry.h"
#include "workloads/script.h"

namespace fs = std::filesystem;

namespace trainbench {
namespace {

using test::temp_dir;

// ---------------------------------------------------------------- numbers

TEST(ValueRules, NonFiniteNumbersAreRefusedByEveryRule) {
  for (const NumberRule& r :
       {kSecondsPositive, kSeconds, kNoisePercent, kStepCount, kWarmupSteps, kThreadCount, kBucketMiB}) {
    for (const char* bad : {"nan", "NaN", "inf", "-inf", "infinity", "1e999"}) {
      const std::string why = number_text_problem(bad, r);
      EXPECT_NE(why.find("must be a finite number"), std::string::npos) << bad << ": " << why;
    }
    EXPECT_NE(number_text_problem("12abc", r).find("is not a number"), std::string::npos);
    EXPECT_NE(number_text_problem("", r).find("is not a number"), std::string::npos);
  }
}

TEST(ValueRules, RangeMessagesAreShortAndTrue) {
  EXPECT_EQ(number_text_problem("0", kSecondsPositive), "0 must be > 0 and at most 1000000");
  EXPECT_EQ(number_text_problem("-1", kSeconds), "-1 must be between 0 and 1000000");
  EXPECT_EQ(number_text_problem("100000", kThreadCount), "100000 must be between 0 and 1024");
  EXPECT_EQ(number_text_problem("2.5", kStepCount), "2.5 must be a whole number");
  EXPECT_EQ(number_text_problem("101", kNoisePercent), "101 must be between 0 and 100");
  // A huge value is not printed in full (no 309-digit numbers): the text as given, cut at 40 characters.
  const std::string huge(400, '9');
  EXPECT_LT(number_text_problem(huge, kSeconds).size(), 100u);
  double v = 0;
  EXPECT_EQ(number_text_problem("2.5", kSeconds, &v), "");
  EXPECT_EQ(v, 2.5);
  EXPECT_EQ(number_text_problem("0", kThreadCount), "");
}

TEST(ValueRules, SizesOverflowingAByteCountAreRefused) {
  EXPECT_THROW(parse_size("1e30G", "memory limit"), InputError);
  EXPECT_THROW(parse_size("nan", "memory limit"), InputError);
  EXPECT_EQ(parse_size("1G", "memory limit"), int64_t{1} << 30);
}

// What trainbench prints as a size it reads back: 1024T prints as 1 PiB, so P is a unit too, and the
// bound is said in it (2^60 bytes = 1024P).
TEST(ValueRules, SizesArePUpTo1024P) {
  EXPECT_EQ(parse_size("1P", "--fits size"), int64_t{1} << 50);
  EXPECT_EQ(parse_size("1 PiB", "--fits size"), parse_size("1024T", "--fits size"));
  EXPECT_EQ(parse_size("1024P", "--fits size"), int64_t{1} << 60);
  try {
    (void)parse_size("1025P", "--fits size");
    ADD_FAILURE() << "1025P accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("at most 1024P"), std::string::npos) << e.what();
  }
}

// An input spec: one spelling per value (no leading zero), the dimension limit named, and no sample
// of more than 10^8 elements reaches an allocator.
TEST(ValueRules, InputSpecsHaveOneSpellingAndNamedLimits) {
  auto why = [](const std::string& text) {
    try {
      (void)parse_script_input(text);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(why("3x8x8"), "");
  EXPECT_NE(why("08").find("leading zero"), std::string::npos) << why("08");
  EXPECT_NE(why("tokens:0512").find("leading zero"), std::string::npos);
  EXPECT_NE(why("1000000000x1000000000").find("must be between 1 and 100000000"), std::string::npos)
      << why("1000000000x1000000000");
  EXPECT_NE(why("100000000x100000000").find("more than 100000000 elements"), std::string::npos)
      << why("100000000x100000000");
  EXPECT_NE(why("3xax8").find("is not an input spec"), std::string::npos);
  EXPECT_EQ(why("100000000"), "");  // exactly the limit
}

// Every integer a user writes (a list like --batch 8,16, a workload parameter) by one rule: plain
// digits, no leading zero, within 64 bits.
TEST(ValueRules, WholeNumbersHaveOneSpelling) {
  int64_t v = -1;
  EXPECT_EQ(whole_number_problem("8", &v), "");
  EXPECT_EQ(v, 8);
  EXPECT_EQ(whole_number_problem("-3", &v), "");
  EXPECT_EQ(v, -3);
  EXPECT_EQ(whole_number_problem("0", &v), "");
  EXPECT_NE(whole_number_problem("08", &v).find("leading zero"), std::string::npos);
  EXPECT_NE(whole_number_problem("99999999999999999999", &v).find("64 bits"), std::string::npos);
  for (const char* bad : {"", "-", "+3", "1e3", "3.0", " 3", "0x10"}) {
    EXPECT_EQ(whole_number_problem(bad, &v), "expected an integer") << bad;
  }
  EXPECT_THROW(parse_int_list("8,016", "--batch"), InputError);
  const WorkloadInfo* convnet = find_workload("convnet");
  ASSERT_NE(convnet, nullptr);
  EXPECT_THROW(canonical_params(*convnet, {{"channels", "08"}}), std::invalid_argument);
  EXPECT_NO_THROW(canonical_params(*convnet, {{"channels", "8"}}));
}

// A %00 escape would cut a path at the NUL where it is used as a C string.
TEST(Descriptors, ANulEscapeIsRefused) {
  EXPECT_EQ(unescape_param_value("a%3Ab"), "a:b");
  EXPECT_THROW(unescape_param_value("/tmp/m.pt%00.txt"), std::invalid_argument);
}

// --data-dtype is for token files: an image folder refuses it, as `trainbench data` does.
TEST(DataSource, ATokenDtypeOnAnImageFolderIsRefused) {
  const fs::path d = temp_dir("hostile", "dtype");
  EXPECT_THROW(data::check_data_source("resnet18", data::DataKind::images, d.string(), "uint32", std::nullopt), DataError);
}

std::string write_suite(const std::string& name, const std::string& text) {
  const fs::path p = temp_dir("hostile", name) / "s.toml";
  std::ofstream(p) << text;
  return p.string();
}

void expect_suite_error(const std::string& text, const std::string& where, const std::string& fragment) {
  const std::string path = write_suite("suite", text);
  try {
    (void)load_suite(path);
    ADD_FAILURE() << "no error for:\n" << text;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ":" + where), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(ValueRules, SuiteSettingsGetTheFlagsRulesWithFileAndLine) {
  const std::string group = "\n[[group]]\nmodel = \"resnet18\"\nbatch = 1\n";
  expect_suite_error("[settings]\nmin_steps = 2\nmax_time = nan\n" + group,
                     "3:", "max_time: nan must be a finite number");
  expect_suite_error("[settings]\nmax_noise = inf\n" + group, "2:", "max_noise: inf must be a finite number");
  expect_suite_error("[settings]\ntimeout = -5.0\n" + group, "2:", "must be between 0 and 1000000");
  expect_suite_error("[settings]\nmin_time = 10.0\nmax_time = 5.0\n" + group, "2:", "min_time 10 is above max_time 5");
  expect_suite_error("[settings]\nmemory_limit = \"lots\"\n" + group, "2:", "lots");
}

TEST(ValueRules, WorkloadParametersAreCheckedTogetherBeforeAnythingRuns) {
  const WorkloadInfo* bert = find_workload("bert");
  ASSERT_NE(bert, nullptr);
  EXPECT_THROW(canonical_params(*bert, {{"hidden", "100"}, {"heads", "12"}}), std::invalid_argument);
  EXPECT_THROW(canonical_params(*bert, {{"seq", "600"}}), std::invalid_argument);  // max_pos 512
  EXPECT_NO_THROW(canonical_params(*bert, {{"hidden", "120"}, {"heads", "12"}}));
  Case c = parse_case("bert:hidden=100:b1:fp32:nchw:cpu");
  EXPECT_THROW(validate_case(c), InputError);
  const WorkloadInfo* convnet = find_workload("convnet");
  ASSERT_NE(convnet, nullptr);
  EXPECT_THROW(canonical_params(*convnet, {{"channels", "0"}}), std::invalid_argument);
}

// ---------------------------------------------------------------- results files

std::string results_text_with(const std::string& field, const std::string& value) {
  std::ifstream in(std::string(TRAINBENCH_TEST_DATA) + "/results_v1.json");
  nlohmann::json j = nlohmann::json::parse(in);
  std::string text = j.dump();
  // Replace the first benchmark's field by raw text (so values JSON cannot hold, like 1e999, get in).
  const std::string key = "\"" + field + "\":";
  const auto at = text.find(key, text.find("\"benchmarks\""));
  EXPECT_NE(at, std::string::npos) << field;
  const auto start = at + key.size();
  const auto end = text.find_first_of(",}", start);
  return text.substr(0, start) + value + text.substr(end);
}

void expect_bad_results(const std::string& field, const std::string& value) {
  try {
    (void)results_from_string(results_text_with(field, value), "x.json");
    ADD_FAILURE() << field << " = " << value << " was accepted";
  } catch (const ResultsError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("x.json: ", 0), 0u) << what;
    EXPECT_NE(what.find("\"" + field + "\""), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

TEST(ResultsValues, ImpossibleValuesNameTheFileAndTheField) {
  expect_bad_results("batch_size", "-8");
  expect_bad_results("throughput", "-3.5");
  expect_bad_results("throughput", "1e999");  // overflows a double
  expect_bad_results("throughput", "1e300");
  expect_bad_results("wall_time_s", "-1");
  expect_bad_results("threads", "100000");
  // The fixture itself reads.
  EXPECT_NO_THROW(results_from_string(results_text_with("throughput", "12.5"), "x.json"));
}

// Every numeric field takes its range from its field table, nested objects too: energy, power, the
// noise target, a memory prediction's size and a fitted slope read back as they were measured or not
// at all.
TEST(ResultsValues, EveryNumericFieldHasItsRange) {
  expect_bad_results("energy_j_per_sample", "-5");
  expect_bad_results("mean_power_w", "1e308");
  expect_bad_results("noise_target", "7");
  expect_bad_results("loss_scale", "-1");
  auto memory_refused = [](const std::function<void(nlohmann::json&)>& edit, const std::string& key) {
    MemoryInfo m;
    m.source = "counting allocator";
    MemoryFit fit;
    fit.basis = "tensors";
    fit.batches = {2, 4};
    fit.peaks = {1000, 2000};
    fit.fixed_bytes = 0;
    fit.per_sample_bytes = 500;
    m.fit = fit;
    m.predictions = {MemoryPrediction{int64_t{1} << 30, 2000000, std::nullopt, 0}};
    nlohmann::json j = memory_to_json(m);
    EXPECT_NO_THROW(memory_from_json(j));
    edit(j);
    try {
      (void)memory_from_json(j);
      ADD_FAILURE() << j.dump() << " was accepted";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  };
  memory_refused([](nlohmann::json& j) { j["predictions"][0]["size_bytes"] = 0; }, "size_bytes");
  memory_refused([](nlohmann::json& j) { j["fit"]["per_sample_bytes"] = -1e300; }, "per_sample_bytes");
}

// A peak read back (the cache, a results file) passes the rules of a measured one: a hand-edited
// negative or 1e-300 GFLOP/s ceiling would print %peak 4.8e+301.
TEST(ResultsValues, APeakReadBackObeysTheRulesOfAMeasuredOne) {
  PeakInfo p;
  p.device = "cpu";
  p.threads = 2;
  p.gemm_gflops["fp32"] = 80.0;
  EXPECT_NO_THROW(peak_info_from_json(to_json(p)));
  for (double bad : {-80.0, 1e-300, 1e300}) {
    nlohmann::json j = to_json(p);
    j["gemm_gflops"]["fp32"] = bad;
    EXPECT_THROW(peak_info_from_json(j), std::runtime_error) << bad;
  }
  nlohmann::json j = to_json(p);
  j["threads"] = -3;
  EXPECT_THROW(peak_info_from_json(j), std::runtime_error);
}

TEST(ResultsValues, FarFromOneNumbersPrintInScientificNotation) {
  EXPECT_EQ(format_significant(1e300), "1.00e+300");
  EXPECT_EQ(format_significant(-2.5e20), "-2.50e+20");
  EXPECT_EQ(format_significant(3.14159e-9), "3.14e-09");
  EXPECT_EQ(format_significant(12345.0), "12300");  // ordinary numbers as before
  EXPECT_EQ(format_significant(0.0012345), "0.00123");
}

// ---------------------------------------------------------------- files and processes

TEST(InputFiles, DirectoriesFifosAndDevicesAreRefusedAtOnce) {
  const fs::path dir = temp_dir("hostile", "inputs");
  const fs::path fifo = dir / "fifo.json";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(input_file_problem(dir.string()), "is a directory");
  EXPECT_EQ(input_file_problem(fifo.string()), "is not a regular file (a FIFO)");
  EXPECT_EQ(input_file_problem("/dev/zero"), "is not a regular file (a device)");
  EXPECT_EQ(input_file_problem((dir / "none").string()), "no such file");
  for (const std::string& p : {dir.string(), fifo.string(), std::string("/dev/zero")}) {
    try {
      (void)read_input_file(p);
      ADD_FAILURE() << p << " was read";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(p + ": is "), std::string::npos) << e.what();
    }
    EXPECT_THROW(read_results(p), ResultsError) << p;
    EXPECT_THROW(read_journal(p), ResultsError) << p;
  }
  // As a suite: the same words, no hang.
  const fs::path fifo_suite = dir / "s.toml";
  ASSERT_EQ(mkfifo(fifo_suite.c_str(), 0600), 0);
  try {
    (void)load_suite(fifo_suite.string());
    ADD_FAILURE() << "a FIFO suite was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("is not a regular file"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
}

TEST(InputFiles, SameFileIsFoundThroughDifferentSpellings) {
  const fs::path dir = temp_dir("hostile", "same");
  std::ofstream(dir / "a.json") << "{}";
  EXPECT_TRUE(same_file((dir / "a.json").string(), (dir / "." / "a.json").string()));
  EXPECT_TRUE(same_file((dir / "b.json").string(), (dir / "sub" / ".." / "b.json").string()));  // neither exists
  EXPECT_FALSE(same_file((dir / "a.json").string(), (dir / "b.json").string()));
  fs::create_symlink(dir / "a.json", dir / "link.json");
  EXPECT_TRUE(same_file((dir / "a.json").string(), (dir / "link.json").string()));
}

TEST(JournalLock, ASecondHolderIsRefusedNamingThePid) {
  const fs::path dir = temp_dir("hostile", "lock");
  const std::string path = (dir / "r.json.journal").string();
  Journal first;
  first.lock(path);
  // flock locks belong to the open file: a second open in this process conflicts like another process.
  Journal second;
  try {
    second.lock(path);
    ADD_FAILURE() << "the lock was taken twice";
  } catch (const JournalBusy& e) {
    EXPECT_EQ(e.pid, static_cast<long>(getpid())) << e.what();
    EXPECT_NE(std::string(e.what()).find("pid " + std::to_string(getpid())), std::string::npos) << e.what();
  }
  first.close();
  EXPECT_FALSE(fs::exists(path)) << "a lock taken for a run that wrote nothing leaves no journal";
  EXPECT_NO_THROW(second.lock(path));
}

TEST(JournalLock, PlanIdentityRoundTripsAndDifferencesAreNamed) {
  const fs::path dir = temp_dir("hostile", "plan");
  const std::string path = (dir / "r.json.journal").string();
  PlanIdentity id;
  id.cases = {"resnet18:b1:fp32:nchw:cpu", "resnet18:b2:fp32:nchw:cpu"};
  id.settings = {{"--max-time", "60"}, {"--warmup", "2"}};
  {
    Journal j;
    j.open(path, Context{}, Journal::Mode::fresh, id);
  }
  const JournalContents c = read_journal(path);
  ASSERT_TRUE(c.plan.has_value());
  EXPECT_EQ(c.plan->cases, id.cases);
  EXPECT_EQ(c.plan->settings, id.settings);

  PlanIdentity same = id;
  std::reverse(same.cases.begin(), same.cases.end());
  EXPECT_EQ(plan_difference(id, same), "");
  PlanIdentity other = id;
  other.settings["--max-time"] = "3";
  other.cases.pop_back();
  const std::string d = plan_difference(id, other);
  EXPECT_NE(d.find("--max-time was 60, now 3"), std::string::npos) << d;
  EXPECT_NE(d.find("1 case(s) only in the journal's plan (resnet18:b2:fp32:nchw:cpu)"), std::string::npos) << d;
}

TEST(PeakCache, NoHomeMeansNoCacheAndForeignFilesAreIgnored) {
  const char* saved_home = std::getenv("HOME");
  const char* saved_xdg = std::getenv("XDG_CACHE_HOME");
  const char* saved_dir = std::getenv("TRAINBENCH_CACHE_DIR");
  const std::string home = saved_home ? saved_home : "", xdg = saved_xdg ? saved_xdg : "",
                    dir = saved_dir ? saved_dir : "";
  unsetenv("HOME");
  unsetenv("XDG_CACHE_HOME");
  unsetenv("TRAINBENCH_CACHE_DIR");
  EXPECT_EQ(peak_cache_path(), "");
  EXPECT_FALSE(find_cached_peak("cpu", "x", 1, "1.13").has_value());
  PeakInfo p;
  EXPECT_FALSE(store_peak(p)) << "nothing may be written without a private cache place";
  if (saved_home) setenv("HOME", home.c_str(), 1);
  if (saved_xdg) setenv("XDG_CACHE_HOME", xdg.c_str(), 1);
  if (saved_dir) setenv("TRAINBENCH_CACHE_DIR", dir.c_str(), 1);
  // A cache file owned by someone else is not read: the same entry is found while it is ours.
  const fs::path d = temp_dir("hostile", "peakcache");
  setenv("TRAINBENCH_CACHE_DIR", d.c_str(), 1);
  p.device = "cpu";
  p.device_name = "x";
  p.threads = 1;
  p.libtorch_version = "1.13";
  ASSERT_TRUE(store_peak(p));
  EXPECT_TRUE(find_cached_peak("cpu", "x", 1, "1.13").has_value());
  if (geteuid() == 0) {
    ASSERT_EQ(chown((d / "peak.json").c_str(), 65534, 65534), 0);
  } else {
    fs::remove(d / "peak.json");
    fs::create_symlink("/etc/passwd", d / "peak.json");  // root's: not ours
  }
  EXPECT_FALSE(find_cached_peak("cpu", "x", 1, "1.13").has_value());
  if (saved_dir)
    setenv("TRAINBENCH_CACHE_DIR", dir.c_str(), 1);
  else
    unsetenv("TRAINBENCH_CACHE_DIR");
}

// ---------------------------------------------------------------- descriptors and the command line

void expect_descriptor_error(const std::string& d, const std::string& fragment) {
  try {
    (void)parse_case(d);
    ADD_FAILURE() << d << " was accepted";
  } catch (const DescriptorError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'" + d + "'"), std::string::npos) << "the input is quoted: " << e.what();
  }
}

TEST(Descriptors, RepeatedOrConflictingFieldsAreRefusedWithTheirColumn) {
  expect_descriptor_error("resnet18:b8:b16:fp32:cpu",
                          "'b16' repeats the batch (already 'b8' at column 10) (at column 13)");
  expect_descriptor_error("resnet18:b8:nchw:nhwc:cpu",
                          "'nhwc' repeats the layout (already 'nchw' at column 13) (at column 18)");
  expect_descriptor_error("resnet18:b8:fwd:fwd:cpu",
                          "'fwd' repeats the 'fwd' flag (already 'fwd' at column 13) (at column 17)");
  expect_descriptor_error("resnet18:b8:fp32:bf16:cpu", "repeats the precision");
  expect_descriptor_error("resnet18:b8:t2:t4:cpu", "repeats the thread count");
  expect_descriptor_error("resnet18:b8:sgd:adam:cpu", "repeats the optimizer");
  expect_descriptor_error("resnet18:b8:t100000:cpu", "tN with N between 1 and 1024");
}

TEST(Descriptors, EmptyFieldsArePointedAt) {
  expect_descriptor_error("resnet18:b8:fp32:cuda:",
                          "empty field after the last ':' (the device comes last) (at column 23)");
  expect_descriptor_error("resnet18:b8::fp32:cpu", "empty field (two colons in a row) (at column 13)");
}

TEST(Compare, DisjointRunsSayWhichSettingToIgnore) {
  ResultsFile base, other;
  Record r;
  r.name = "resnet18:b8:fp32:nchw:cpu";
  r.model = "resnet18";
  r.batch_size = 8;
  r.precision = "fp32";
  r.layout = "nchw";
  r.optimizer = "sgd";
  r.status = Status::ok;
  r.throughput = 10;
  base.benchmarks.push_back(r);
  r.layout = "nhwc";
  r.name = "resnet18:b8:fp32:nhwc:cpu";
  other.benchmarks.push_back(r);
  const std::string hint = disjoint_hint(base, other);
  EXPECT_NE(hint.find("they differ in layout (nchw in BASE, nhwc in OTHER); try --ignore layout"), std::string::npos)
      << hint;
  EXPECT_EQ(disjoint_hint(base, base), "");
}

// ---------------------------------------------------------------- the report

TEST(ReportEscaping, InlineJsonCannotEndTheScriptOrOpenACommentOrTag) {
  const std::string hostile = "</script><script>alert(1)</script><!-- & \xE2\x80\xA8 \xE2\x80\xA9 -->";
  const std::string safe = detail::json_script_safe(nlohmann::json({{"s", hostile}}).dump());
  for (const char* bad : {"<", ">", "&", "\xE2\x80\xA8", "\xE2\x80\xA9"})
    EXPECT_EQ(safe.find(bad), std::string::npos) << bad;
  EXPECT_EQ(nlohmann::json::parse(safe)["s"], hostile) << "the escapes mean the same string";
}

}  // namespace
}  // namespace trainbench
