#include "predict/scaling.h"

#include <algorithm>
#include <cmath>

#include "core/value_rules.h"

namespace trainbench::predict {

const std::vector<Link>& links() {
  // clang-format off
  static const std::vector<Link> table = {
      {"pcie3", "PCIe 3.0 x16", 15.75, 10e-6, false, "PCI-SIG PCIe 3.0 specification: 8 GT/s x 16 lanes, 128b/130b"},
      {"pcie4", "PCIe 4.0 x16", 31.5, 10e-6, false, "PCI-SIG PCIe 4.0 specification: 16 GT/s x 16 lanes, 128b/130b"},
      {"pcie5", "PCIe 5.0 x16", 63.0, 10e-6, false, "PCI-SIG PCIe 5.0 specification: 32 GT/s x 16 lanes, 128b/130b"},
      {"nvlink2", "NVLink 2 (V100 SXM2): 6 links x 25 GB/s", 150.0, 5e-6, false,
       "NVIDIA Tesla V100 GPU architecture whitepaper: 300 GB/s NVLink, both directions"},
      {"nvlink3", "NVLink 3 (A100 SXM4): 12 links x 25 GB/s", 300.0, 5e-6, false,
       "NVIDIA A100 Tensor Core GPU architecture whitepaper: 600 GB/s NVLink, both directions"},
      {"nvlink4", "NVLink 4 (H100 SXM5): 18 links x 25 GB/s", 450.0, 5e-6, false,
       "NVIDIA H100 Tensor Core GPU architecture whitepaper: 900 GB/s NVLink, both directions"},
      {"nvlink5", "NVLink 5 (B200): 18 links x 50 GB/s", 900.0, 5e-6, false,
       "NVIDIA Blackwell architecture technical brief: 1.8 TB/s NVLink, both directions"},
      {"eth-100g", "100 Gb/s Ethernet (RoCE)", 12.5, 20e-6, true, "IEEE 802.3 100GBASE: 100 Gb/s"},
      {"ib-edr", "InfiniBand EDR, 100 Gb/s per port", 12.5, 10e-6, true, "InfiniBand Trade Association roadmap: EDR 100 Gb/s 4x"},
      {"ib-hdr", "InfiniBand HDR, 200 Gb/s per port", 25.0, 10e-6, true, "InfiniBand Trade Association roadmap: HDR 200 Gb/s 4x"},
      {"ib-ndr", "InfiniBand NDR, 400 Gb/s per port", 50.0, 10e-6, true, "InfiniBand Trade Association roadmap: NDR 400 Gb/s 4x"},
  };
  // clang-format on
  return table;
}

const Link& find_link(const std::string& id, const std::string& flag) {
  for (const Link& l : links()) {
    if (l.id == id) return l;
  }
  std::string known;
  for (const Link& l : links()) known += (known.empty() ? "" : ", ") + l.id;
  throw InputError("unknown " + flag + " '" + id + "' (one of " + known + ")");
}

ScalingAnswer scale_step(const SingleStep& one, const Cluster& c) {
  if (c.gpus < 1) throw InputError("--gpus must be at least 1");
  if (c.gpus_per_node < 1) throw InputError("--gpus-per-node must be at least 1");
  if (one.micro_batches < 1) throw InputError("micro-batches must be at least 1");
  const Link& intra = find_link(c.intra, "--link");
  if (intra.between_nodes)
    throw InputError("--link " + c.intra + " joins nodes, not the GPUs of one node: use --network");
  const bool nodes = c.gpus > c.gpus_per_node;
  // The ring's slowest hop: inside a node, the GPU's link; between nodes, the node's ports shared by its GPUs.
  double gbps = intra.gbps;
  double latency = intra.latency_s;
  if (nodes) {
    if (c.inter.empty()) {
      throw InputError(std::to_string(c.gpus) + " GPUs at " + std::to_string(c.gpus_per_node) +
                       " per node span several nodes: give --network (e.g. 8xib-hdr)");
    }
    const Link& inter = find_link(c.inter, "--network");
    if (!inter.between_nodes) throw InputError("--network " + c.inter + " is a link inside a node: use --link");
    gbps = std::min(gbps, inter.gbps * c.ports / c.gpus_per_node);
    latency = std::max(latency, inter.latency_s);
  }
  ScalingAnswer a;
  a.bus_gbps = gbps * kAllreduceLinkShare;
  const double n = c.gpus;
  if (c.gpus > 1) {
    const double buckets = std::max(1.0, std::ceil(one.gradient_bytes / static_cast<double>(kBucketBytes)));
    a.allreduce_s = 2.0 * (n - 1.0) / n * one.gradient_bytes / (a.bus_gbps * 1e9) + 2.0 * (n - 1.0) * latency * buckets;
    // Buckets are reduced while backward goes on, from the first full bucket to the end of backward:
    // the last micro-batch's backward less one bucket's share of it. The last bucket never hides.
    const double backward_s = one.compute_s / one.micro_batches * one.backward_share;
    const double window = backward_s * (1.0 - 1.0 / buckets);
    a.exposed_s = std::max(a.allreduce_s - window, a.allreduce_s / buckets);
  }
  a.step_s = one.compute_s + a.exposed_s;
  return a;
}

}  // namespace trainbench::predict

#include <fmt/format.h>

#include "results/record.h"
#include "results/text_table.h"

namespace trainbench::predict {

std::pair<int, std::string> parse_network(const std::string& text) {
  const auto x = text.find('x');
  int ports = 1;
  std::string id = text;
  if (x != std::string::npos && x > 0 && text.find_first_not_of("0123456789") == x) {
    ports = std::stoi(text.substr(0, std::min<size_t>(x, 6)));
    id = text.substr(x + 1);
  }
  if (ports < 1 || ports > 64) throw InputError("--network '" + text + "': 1 to 64 ports per node");
  (void)find_link(id, "--network");
  return {ports, id};
}

std::vector<ScalingPoint> scaling_points(double step_s, int64_t batch, double gradient_bytes,
                                         const std::vector<int64_t>& gpus, Cluster cluster) {
  std::vector<ScalingPoint> out;
  SingleStep one;
  one.compute_s = step_s;
  one.backward_share = kBackwardShare;
  one.gradient_bytes = gradient_bytes;
  for (const int64_t n : gpus) {
    if (n < 1 || n > (1 << 20)) throw InputError("--gpus " + std::to_string(n) + ": 1 to 1048576");
    cluster.gpus = static_cast<int>(n);
    const ScalingAnswer a = scale_step(one, cluster);
    ScalingPoint p;
    p.gpus = cluster.gpus;
    p.nodes = (cluster.gpus + cluster.gpus_per_node - 1) / cluster.gpus_per_node;
    p.interconnect = cluster.intra + (p.nodes > 1 ? fmt::format("+{}x{}", cluster.ports, cluster.inter) : "");
    p.step_time_s = a.step_s;
    p.throughput = static_cast<double>(n * batch) / a.step_s;
    p.efficiency = step_s / a.step_s;
    p.allreduce_s = a.allreduce_s;
    p.exposed_s = a.exposed_s;
    out.push_back(p);
  }
  return out;
}

std::string scaling_table(const std::vector<std::pair<std::string, const ScalingPoint*>>& rows) {
  std::vector<std::vector<std::string>> cells;
  for (const auto& [label, p] : rows) {
    cells.push_back({label, std::to_string(p->gpus), std::to_string(p->nodes), p->interconnect,
                     fmt::format("{:.4g}", p->throughput), fmt::format("{:.1f}%", 100.0 * p->efficiency),
                     fmt::format("{:.2f}", p->step_time_s * 1e3), fmt::format("{:.2f}", p->allreduce_s * 1e3),
                     fmt::format("{:.2f}", p->exposed_s * 1e3)});
  }
  return fitted_table({{"card / case"},
                       {"gpus", 0, true},
                       {"nodes", 0, true},
                       {"interconnect"},
                       {"samples/s", 0, true},
                       {"efficiency", 0, true},
                       {"step ms", 0, true},
                       {"all-reduce ms", 0, true},
                       {"exposed ms", 0, true}},
                      cells);
}

}  // namespace trainbench::predict
