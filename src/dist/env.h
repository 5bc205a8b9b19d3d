// A data-parallel worker's place in the job, from torchrun's environment conventions: RANK, WORLD_SIZE,
// LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT (the TCPStore rendezvous of rank 0).
#pragma once
#include <cstdint>
#include <functional>
#include <string>

namespace trainbench::dist {

struct DistEnv {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;  // workers on this node; LOCAL_WORLD_SIZE, else WORLD_SIZE (one node)
  std::string master_addr = "127.0.0.1";
  uint16_t master_port = 29500;
};

// Reads the variables through `get` (getenv in production, a map in tests). Throws InputError with one
// line naming the variable for a missing or invalid value, e.g. "RANK=3 is not below WORLD_SIZE=2".
DistEnv dist_env_from(const std::function<const char*(const char*)>& get);
DistEnv dist_env_from_process();

// "host:port" with port in 1..65535; throws InputError quoting `what` otherwise.
std::pair<std::string, uint16_t> parse_host_port(const std::string& text, const std::string& what);

}  // namespace trainbench::dist
