// c10d process groups for data parallelism: the TCPStore rendezvous, and the backend chosen for the
// device (Gloo on CPU, NCCL on CUDA builds; RCCL on ROCm builds answers to the NCCL API).
// LibTorch 1.13 calls the backend object a ProcessGroup; 2.x a Backend (under a ProcessGroup) with the
// same collective calls. `Comm` names whichever this LibTorch has.
#pragma once
#include <torch/version.h>

#include <cstdint>
#include <string>

#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>
#if TORCH_VERSION_MAJOR >= 2
#include <torch/csrc/distributed/c10d/Backend.hpp>
#else
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#endif

#include "dist/env.h"

namespace trainbench::dist {

#if TORCH_VERSION_MAJOR >= 2
using Comm = c10d::Backend;
#else
using Comm = c10d::ProcessGroup;
#endif
using CommPtr = c10::intrusive_ptr<Comm>;
using StorePtr = c10::intrusive_ptr<c10d::Store>;

constexpr int64_t kDefaultBucketBytes = 25 << 20;  // DistributedDataParallel's bucket_cap_mb default

struct DistSettings {
  std::string backend = "auto";  // auto | gloo | nccl
  double timeout_s = 300.0;      // rendezvous, store waits and every collective
  int64_t bucket_bytes = kDefaultBucketBytes;
};

// "gloo" for CPU devices, "nccl" for GPUs; a requested backend is checked against device and build.
// Throws InputError with one line.
std::string resolve_backend(const std::string& requested, bool gpu);

// The TCPStore at MASTER_ADDR:MASTER_PORT, under e.store_prefix. `host`: this process is the one that
// hosts it in trainbench's own scheme (rank 0's runner) and starts the server, unless torchrun's agent
// already hosts it (e.agent_store): then every process connects as a client. Clients retry until
// `timeout_s`.
StorePtr connect_store(const DistEnv& e, bool host, double timeout_s);

// `store` under a key prefix, so that each case's rendezvous has keys of its own.
StorePtr prefixed(const std::string& prefix, StorePtr store);

// A process group of e.world_size ranks over `store` (rendezvous included: returns when all ranks
// are connected, or throws after `timeout_s`). Gloo binds to GLOO_SOCKET_IFNAME when set, to
// 127.0.0.1 when the master is a loopback address (outside Kubernetes pods), else to the address this
// host's name resolves to.
CommPtr make_comm(StorePtr store, const DistEnv& e, const std::string& backend, double timeout_s);

}  // namespace trainbench::dist
