#include "dist/process_group.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

// The Gloo header declares its class only when LibTorch was built with it (Debian's has it).
#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO
#endif
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

// NCCL on CUDA builds; ROCm builds have RCCL behind the same class.
#if defined(TRAINBENCH_WITH_CUDA) || defined(TRAINBENCH_WITH_HIP)
#define TRAINBENCH_WITH_NCCL 1
#ifndef USE_C10D_NCCL
#define USE_C10D_NCCL
#endif
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include "core/failure.h"
#include "core/value_rules.h"

namespace trainbench::dist {
namespace {

std::chrono::milliseconds to_ms(double s) { return std::chrono::milliseconds(static_cast<int64_t>(s * 1000.0)); }

bool is_loopback(const std::string& host) { return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0; }

}  // namespace

std::string resolve_backend(const std::string& requested, bool gpu) {
  if (requested == "auto") return gpu ? "nccl" : "gloo";
  if (requested == "gloo") return "gloo";  // Gloo also reduces CUDA tensors (through host memory)
  if (requested == "nccl") {
#ifdef TRAINBENCH_WITH_NCCL
    if (!gpu) throw InputError("--dist-backend nccl needs a GPU device (the case runs on cpu)");
    return "nccl";
#else
    throw InputError("--dist-backend nccl needs a CUDA or ROCm build of trainbench (this LibTorch is CPU only)");
#endif
  }
  throw InputError("unknown --dist-backend '" + requested + "' (expected auto, gloo or nccl)");
}

StorePtr connect_store(const DistEnv& e, bool host, double timeout_s) {
  c10d::TCPStoreOptions o;
  o.port = e.master_port;
  o.isServer = host && !e.agent_store;
  o.waitWorkers = false;  // the workers connect at their own pace; rendezvous waits come later
  o.timeout = to_ms(timeout_s);
  // The server listens on every interface; `host` is where this process itself connects.
  StorePtr store = c10::make_intrusive<c10d::TCPStore>(e.master_addr, o);
  if (e.agent_store) {
    // The agent is torchrun's Python, whose torch may speak another store protocol than this LibTorch
    // (a 1.13 client cannot talk to a 2.x agent's store: its first request breaks the connection).
    try {  // each request trainbench makes of it, on a key of this rank's
      const std::string key = "trainbench/probe/" + std::to_string(e.rank) + "/" + std::to_string(::getpid());
      store->set(key, std::vector<uint8_t>{1});
      store->wait({key}, to_ms(std::min(timeout_s, 30.0)));
      (void)store->get(key);
      (void)store->check({key});
    } catch (const std::exception& ex) {
      throw std::runtime_error("torchrun's agent store at " + e.master_addr + ":" + std::to_string(e.master_port) +
                               " does not answer " + "this trainbench (LibTorch " +
                               std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + ": " +
                               first_line(ex.what()) + "); use the torchrun of " + "a torch " +
                               std::to_string(TORCH_VERSION_MAJOR) + ".x, or start torchrun with " +
                               "TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1 so that rank 0 hosts the store");
    }
  }
  return e.store_prefix.empty() ? store : prefixed(e.store_prefix, std::move(store));
}

StorePtr prefixed(const std::string& prefix, StorePtr store) {
  return c10::make_intrusive<c10d::PrefixStore>(prefix, std::move(store));
}

CommPtr make_comm(StorePtr store, const DistEnv& e, const std::string& backend, double timeout_s) {
  if (backend == "gloo") {
    auto o = c10d::ProcessGroupGloo::Options::create(to_ms(timeout_s));
    if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname != nullptr && *ifname != '\0') {
      o->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
    } else if (is_loopback(e.master_addr) && !e.pod) {
      // Without DNS the default device cannot resolve this host's name; ranks that reach the master on
      // loopback all run on this host and need only loopback. (Not in a PyTorchJob: rank 0's pod may be
      // told MASTER_ADDR=localhost while the other pods reach it by name.)
      o->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
    } else {
      o->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
    }
    return c10::make_intrusive<c10d::ProcessGroupGloo>(store, e.rank, e.world_size, o);
  }
#ifdef TRAINBENCH_WITH_NCCL
  if (backend == "nccl") {
    // NCCL connects lazily, at the first collective, after every rank chose its GPU (LOCAL_RANK).
    auto o = c10d::ProcessGroupNCCL::Options::create();
    o->timeout = to_ms(timeout_s);
    return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, e.rank, e.world_size, o);
  }
#endif
  throw InputError("backend '" + backend + "' is not available in this build");
}

}  // namespace trainbench::dist
