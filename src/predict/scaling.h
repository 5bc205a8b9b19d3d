// Data-parallel scaling of a training step to N GPUs over a named interconnect (docs/prediction.md,
// "Scaling out"): a ring all-reduce of the gradients moves 2(N-1)/N of their bytes through each GPU's
// slowest link; the part of it that runs while backward still computes is hidden, the rest adds to the
// step. Torch-free.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace trainbench::predict {

// One interconnect: the bandwidth each GPU can send at (one direction), with its public source.
struct Link {
  std::string id;          // "nvlink3", "ib-hdr", "pcie4"
  std::string name;        // "NVLink 3 (A100): 12 links x 25 GB/s"
  double gbps = 0.0;       // GB/s per GPU (within a node) or per port (between nodes), one direction
  double latency_s = 0.0;  // per ring step
  bool between_nodes = false;
  std::string source;
};

const std::vector<Link>& links();
// The link with id `id`; InputError naming `flag` and the known ids otherwise.
const Link& find_link(const std::string& id, const std::string& flag);

// The share of a link's bandwidth an all-reduce achieves (nccl-tests' busbw over the link's figure):
// 240 of NVLink 3's 300 GB/s on 8 A100 SXM4 (docs/prediction.md names the source). Not fitted.
constexpr double kAllreduceLinkShare = 240.0 / 300.0;
constexpr int64_t kBucketBytes = 25 << 20;  // DistributedDataParallel's and trainbench's buckets

// A cluster: `gpus` GPUs, `gpus_per_node` to a node joined by `intra`; nodes joined by `ports` ports
// each of `inter` (ignored on one node).
struct Cluster {
  int gpus = 1;
  int gpus_per_node = 8;
  std::string intra = "nvlink3";
  std::string inter;  // "" on one node
  int ports = 1;      // of `inter`, per node
};

// One step of one GPU: what the step does without communication.
struct SingleStep {
  double compute_s = 0.0;             // one optimizer step on one GPU (all its micro-batches), no all-reduce
  double backward_share = 2.0 / 3.0;  // of the last micro-batch's compute: backward (hides communication)
  int micro_batches = 1;              // gradient accumulation: one all-reduce per optimizer step
  double gradient_bytes = 0.0;        // all-reduced per optimizer step
};

struct ScalingAnswer {
  double allreduce_s = 0.0;  // the gradients' ring all-reduce
  double exposed_s = 0.0;    // of it, what backward does not hide
  double step_s = 0.0;       // compute + exposed
  double bus_gbps = 0.0;     // the ring's slowest link per GPU, after kAllreduceLinkShare
};

// The step on `cluster` (micro_batches per GPU as given: the caller divides a fixed global batch).
// InputError for an unknown link, gpus < 1, gpus_per_node < 1, or several nodes without `inter`.
ScalingAnswer scale_step(const SingleStep& one, const Cluster& cluster);

}  // namespace trainbench::predict

namespace trainbench {
struct ScalingPoint;
}

namespace trainbench::predict {

// `--network 8xib-hdr`: ports per node and the link id ("ib-hdr" alone: one port). InputError otherwise.
std::pair<int, std::string> parse_network(const std::string& text);

// `predict --gpus`: a predicted one-GPU step (`step_s` at `batch`) on each of `gpus`, the gradients
// `gradient_bytes`, backward taking kBackwardShare of the step.
std::vector<ScalingPoint> scaling_points(double step_s, int64_t batch, double gradient_bytes,
                                         const std::vector<int64_t>& gpus, Cluster cluster);

// Backward's share of a training step's compute: twice the forward's FLOPs (the gradients to the input
// and to the weights) over three forwards' worth.
constexpr double kBackwardShare = 2.0 / 3.0;

// The rows of `predict --gpus`'s second table.
std::string scaling_table(const std::vector<std::pair<std::string, const ScalingPoint*>>& rows);

}  // namespace trainbench::predict
