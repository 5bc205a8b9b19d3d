// The data-parallel scaling answer (predict/scaling.h, `predict --gpus`): the ring all-reduce by hand,
// and the answer against published multi-GPU training tables (bench/data/published-scaling.csv:
// NVIDIA DeepLearningExamples' 1-, 8-, 16-GPU and multi-node rows), each predicted from its table's
// baseline row.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "cli_util.h"
#include "core/value_rules.h"
#include "predict/scaling.h"
#include "results/record.h"
#include "results/results_file.h"

namespace trainbench {
namespace {

using namespace test;

TEST(Scaling, RingAllreduceByHand) {
  predict::SingleStep one;
  one.compute_s = 0.3;
  one.gradient_bytes = 100e6;  // 100 MB: 4 buckets of 25 MiB
  predict::Cluster c;
  c.gpus = 8;
  c.intra = "nvlink3";
  const predict::ScalingAnswer a = predict::scale_step(one, c);
  // 2 x 7/8 of 100 MB at 0.8 x 300 GB/s, plus 2 x 7 ring steps of 5 us for each of 4 buckets.
  const double allreduce = 2.0 * 7.0 / 8.0 * 100e6 / 240e9 + 14 * 5e-6 * 4;
  EXPECT_NEAR(a.allreduce_s, allreduce, 1e-12);
  EXPECT_DOUBLE_EQ(a.bus_gbps, 240.0);
  // Backward (2/3 of 0.3 s) less one bucket's quarter hides all but the last bucket's quarter.
  EXPECT_NEAR(a.exposed_s, allreduce / 4, 1e-12);
  EXPECT_NEAR(a.step_s, 0.3 + allreduce / 4, 1e-12);
  // A short step hides less: 1 ms of compute leaves the all-reduce less 0.5 ms.
  one.compute_s = 1e-3;
  EXPECT_NEAR(predict::scale_step(one, c).exposed_s, allreduce - 1e-3 * 2.0 / 3.0 * 0.75, 1e-12);
  // Over nodes: 8 HDR ports shared by 8 GPUs (25 GB/s each) is the ring's slowest hop.
  c.gpus = 64;
  c.inter = "ib-hdr";
  c.ports = 8;
  EXPECT_DOUBLE_EQ(predict::scale_step(one, c).bus_gbps, 25.0 * 0.8);
  // One GPU: nothing to reduce.
  c.gpus = 1;
  EXPECT_EQ(predict::scale_step(one, c).allreduce_s, 0.0);
  EXPECT_THROW(predict::find_link("nvlink9", "--link"), InputError);
  c.gpus = 16;
  c.inter.clear();
  EXPECT_THROW(predict::scale_step(one, c), InputError);  // two nodes, no --network
}

// BERT-Large's parameters from its shapes (Devlin et al.: 24 layers, hidden 1024, 16 heads, FFN 4096,
// vocabulary 30522, 512 positions, 2 segments); with the pre-training heads (pooler, MLM transform,
// norm and decoder bias tied to the embeddings, next-sentence classifier) or SQuAD's span head.
double bert_large_parameters(bool pretraining) {
  const double v = 30522, p = 512, t = 2, h = 1024, l = 24, f = 4096;
  const double embeddings = (v + p + t) * h + 2 * h;
  const double layer = 4 * (h * h + h) + 2 * h + (h * f + f) + (f * h + h) + 2 * h;
  const double heads = pretraining ? (h * h + h) + (h * h + h + 2 * h) + v + (2 * h + 2) : 2 * h + 2;
  return embeddings + l * layer + heads;
}

struct Row {
  std::string id, source, system, interconnect, model, detail, precision;
  int gpus = 0, batch = 0;
  double throughput = 0;
};

std::vector<Row> published_rows() {
  std::ifstream in(std::string(TRAINBENCH_TEST_DATA) + "/../../bench/data/published-scaling.csv");
  std::vector<Row> rows;
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (header) {
      header = false;
      continue;
    }
    std::vector<std::string> c;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) c.push_back(cell);
    c.resize(15);
    Row r{c[0], c[1].substr(0, 2), c[3], c[7], c[8], c[9], c[11]};
    r.gpus = std::stoi(c[5]);
    r.batch = c[10].empty() ? 0 : std::stoi(c[10]);
    r.throughput = std::stod(c[13]);
    rows.push_back(r);
  }
  return rows;
}

int accumulation(const std::string& detail) {
  std::smatch m;
  return std::regex_search(detail, m, std::regex("grad-accum (\\d+)")) ? std::stoi(m[1]) : 1;
}

// A table's baseline (its fewest GPUs) carried to its other rows: the compute of one micro-batch is
// solved from the baseline (its step less its own exposed all-reduce), then each row's step is its
// micro-batches plus its all-reduce's exposed part. Gradients are fp32 (4 bytes, every harness keeps
// fp32 master weights); DGX A100's nodes have 8 HDR ports (its datasheet) where the table names none.
TEST(Scaling, WithinFifteenPercentOfPublishedMultiGpuRows) {
  const std::vector<Row> rows = published_rows();
  ASSERT_GE(rows.size(), 40u);
  std::map<std::string, std::vector<Row>> tables;
  for (const Row& r : rows) {
    const std::string detail = std::regex_replace(r.detail, std::regex("grad-accum \\d+"), "");
    tables[r.source + r.system + r.model + detail + r.precision + std::to_string(r.batch)].push_back(r);
  }
  int compared = 0, within = 0;
  double total = 0, worst = 0;
  std::string report;
  for (auto& [key, table] : tables) {
    std::sort(table.begin(), table.end(), [](const Row& a, const Row& b) { return a.gpus < b.gpus; });
    const Row& base = table.front();
    if (base.batch == 0) continue;  // the batch per GPU is not printed: no step time to start from
    predict::SingleStep one;
    one.gradient_bytes =
        4.0 * (base.model == "resnet50" ? 25557032.0  // torchvision's ResNet-50 (v1.5 has the same shapes)
                                        : bert_large_parameters(base.detail.find("pretraining") != std::string::npos));
    predict::Cluster cluster;
    cluster.intra = base.interconnect.rfind("nvlink3", 0) == 0 ? "nvlink3" : "nvlink2";
    cluster.gpus_per_node = base.system == "dgx-2" ? 16 : 8;
    cluster.inter = "ib-hdr";
    cluster.ports = 8;
    const int a0 = accumulation(base.detail);
    const double t0 = a0 * base.batch * base.gpus / base.throughput;  // the baseline's optimizer step
    double micro = t0 / a0;
    for (int i = 0; i < 30; ++i) {
      one.compute_s = micro * a0;
      one.micro_batches = a0;
      cluster.gpus = base.gpus;
      micro = (t0 - predict::scale_step(one, cluster).exposed_s) / a0;
    }
    for (size_t i = 1; i < table.size(); ++i) {
      const Row& r = table[i];
      const int a = accumulation(r.detail);
      one.compute_s = micro * a;
      one.micro_batches = a;
      cluster.gpus = r.gpus;
      const double predicted = r.gpus * a * r.batch / predict::scale_step(one, cluster).step_s;
      const double error = std::abs(predicted - r.throughput) / r.throughput;
      ++compared;
      within += error <= 0.15;
      total += error;
      worst = std::max(worst, error);
      report += r.id + " " + r.model + " " + r.precision + " " + std::to_string(r.gpus) + " GPUs: predicted " +
                std::to_string(static_cast<int>(predicted)) + ", published " +
                std::to_string(static_cast<int>(r.throughput)) + " (" + std::to_string(100 * error) + "%)\n";
    }
  }
  RecordProperty("compared", compared);
  RecordProperty("within_15_percent", within);
  std::cout << report << compared << " rows: " << within << " within 15%, mean error " << 100 * total / compared
            << "%, worst " << 100 * worst << "%\n";
  EXPECT_GE(compared, 20);
  EXPECT_GE(within, 4) << report;  // the goal; the note gives the whole spread
  EXPECT_LT(total / compared, 0.10) << report;
}

// `predict --gpus`: a record's scaling points, and a bad cluster refused in one line before any census.
TEST(Scaling, PredictGpusOnTheCommandLine) {
  const auto dir = temp_dir("scaling", "cli");
  const CmdResult r = run_trainbench(
      "predict --model convnet --set channels=4 --set depth=1 --set image=8 --batch 2 --on h100-sxm "
      "--gpus 1,8,64 --link nvlink4 --network 8xib-ndr -o " +
          (dir / "p.json").string(),
      dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("all-reduce ms"), std::string::npos) << r.out;
  const ResultsFile f = read_results((dir / "p.json").string());
  ASSERT_EQ(f.benchmarks.size(), 1u);
  const auto& points = f.benchmarks[0].prediction->scaling;
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points[0].gpus, 1);
  EXPECT_DOUBLE_EQ(points[0].efficiency, 1.0);
  EXPECT_EQ(points[2].nodes, 8);
  EXPECT_EQ(points[2].interconnect, "nvlink4+8xib-ndr");
  EXPECT_LE(points[2].efficiency, points[1].efficiency);
  EXPECT_NEAR(points[1].throughput, 8 * 2 / points[1].step_time_s, 1e-9 * points[1].throughput);
  const std::string base = "predict --model convnet --batch 2 --on h100-sxm ";
  for (const auto& [args, fragment] : std::vector<std::pair<std::string, std::string>>{
           {"--gpus 8", "--gpus needs --link"},
           {"--gpus 8 --link ib-hdr", "joins nodes"},
           {"--gpus 64 --link nvlink4", "give --network"},
           {"--gpus 64 --link nvlink4 --network 8xnvlink4", "is a link inside a node"},
           {"--gpus 8 --link nvlink9", "unknown --link 'nvlink9'"},
           {"--gpus 0 --link nvlink4", "bad --gpus 0"},
           {"--link nvlink4", "describe a cluster for --gpus"}}) {
    EXPECT_TRUE(refused(run_trainbench(base + args, dir), {fragment})) << args;
  }
}

}  // namespace
}  // namespace trainbench
