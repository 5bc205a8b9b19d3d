// What the report knows of workloads comes from the workload registry (the ablation, the families), and
// compare's join key is the case descriptor without the device.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/compare.h"
#include "report/html_report.h"
#include "cases/case.h"
#include "cases/workload_info.h"

namespace trainbench {
namespace {

// The ablation entry names a parameter the workload has, and every variant is a value it accepts.
TEST(WorkloadRegistry, AblationVariantsAreValuesOfItsParameter) {
  int ablations = 0;
  for (const auto& w : all_workloads()) {
    if (!w.ablation) continue;
    ++ablations;
    EXPECT_EQ(w.family, "ablation") << w.name;
    ASSERT_FALSE(w.ablation->variants.empty()) << w.name;
    for (const auto& v : w.ablation->variants) {
      EXPECT_NO_THROW((void)canonical_params(w, {{w.ablation->param, v}})) << w.name << " " << v;
    }
    EXPECT_THROW((void)canonical_params(w, {{w.ablation->param, "no-such-variant"}}), std::invalid_argument);
  }
  EXPECT_EQ(ablations, 1);  // convnet
}

// The report's ablation chart takes its workload, heading and bar order from the registry entry.
TEST(WorkloadRegistry, ReportAblationComesFromTheRegistryEntry) {
  const WorkloadInfo* w = find_workload("convnet");
  ASSERT_NE(w, nullptr);
  ASSERT_TRUE(w->ablation);
  ResultsFile f;
  for (const char* variant : {"depthwise", "conv"}) {  // the bars follow the registry, not the file
    Record r;
    r.model = "convnet";
    r.params = {{"variant", variant}};
    r.batch_size = 4;
    r.status = Status::ok;
    r.throughput = 10.0;
    r.unit = "images/s";
    f.benchmarks.push_back(r);
  }
  const auto m = report_model({{"a.json", f}});
  ASSERT_TRUE(m["ablation"].is_object());
  EXPECT_EQ(m["ablation"]["workload"], "convnet");
  EXPECT_EQ(m["ablation"]["title"], w->ablation->title);
  EXPECT_EQ(m["ablation"]["labels"].get<std::vector<std::string>>(), (std::vector<std::string>{"conv", "depthwise"}));
}

// join_key is the case's descriptor up to the device: checked against descriptors written out by hand.
TEST(JoinKey, IsTheDescriptorWithoutTheDevice) {
  struct {
    const char* descriptor;
    const char* key;
  } cases[] = {{"resnet50:b32:fp32:nchw:cpu", "resnet50:b32:fp32:nchw"},
               {"bert:layers=2:b8:bf16:nhwc:adamw:t4:fwd:cuda:1", "bert:layers=2:b8:bf16:nhwc:adamw:t4:fwd"},
               {"convnet:channels=8,variant=separable:b4:fp32:nchw:momentum:cuda",
                "convnet:channels=8,variant=separable:b4:fp32:nchw:momentum"}};
  for (const auto& c : cases) {
    const Case parsed = parse_case(c.descriptor);
    Record r;
    r.model = parsed.model;
    r.params = parsed.params;
    r.batch_size = parsed.batch;
    r.precision = parsed.precision.str();
    r.layout = to_string(parsed.layout);
    r.optimizer = parsed.optimizer;
    r.threads = parsed.threads;
    r.forward_only = parsed.forward_only;
    EXPECT_EQ(join_key(r, true), c.key);
  }
  // Parameters at their default are left out (convnet's variant conv), and so is the thread count unless asked.
  Record r;
  r.model = "convnet";
  r.precision = "fp32";
  r.layout = "nchw";
  r.optimizer = "sgd";
  r.params = {{"variant", "conv"}, {"depth", "2"}};
  r.batch_size = 2;
  r.threads = 3;
  EXPECT_EQ(join_key(r, false), "convnet:depth=2:b2:fp32:nchw");
  EXPECT_EQ(join_key(r, true), "convnet:depth=2:b2:fp32:nchw:t3");
}

}  // namespace
}  // namespace trainbench
