#include "dist/env.h"

#include <cstdlib>

#include "core/value_rules.h"

namespace trainbench::dist {
namespace {

long parse_number(const char* name, const std::string& value, long lo, long hi) {
  if (value.empty() || value.size() > 9 || value.find_first_not_of("0123456789") != std::string::npos) {
    throw InputError(std::string(name) + "='" + value + "' is not a number (torchrun-style variable)");
  }
  const long v = std::stol(value);
  if (v < lo || v > hi) {
    throw InputError(std::string(name) + "=" + value + " is out of range (" + std::to_string(lo) + " to " +
                     std::to_string(hi) + ")");
  }
  return v;
}

}  // namespace

std::pair<std::string, uint16_t> parse_host_port(const std::string& text, const std::string& what) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
    throw InputError("bad " + what + " '" + text + "' (expected HOST:PORT, e.g. 10.0.0.1:29500)");
  }
  const std::string port = text.substr(colon + 1);
  if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos || std::stol(port) < 1 ||
      std::stol(port) > 65535) {
    throw InputError("bad " + what + " '" + text + "': port '" + port + "' is not 1 to 65535");
  }
  std::string host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  return {host, static_cast<uint16_t>(std::stol(port))};
}

DistEnv dist_env_from(const std::function<const char*(const char*)>& get) {
  auto required = [&](const char* name) -> std::string {
    const char* v = get(name);
    if (v == nullptr) {
      throw InputError(
          std::string("--dist needs ") + name +
          " in the environment (start the workers with `trainbench launch --nproc N -- run ...` or torchrun)");
    }
    return v;
  };
  DistEnv e;
  e.world_size = static_cast<int>(parse_number("WORLD_SIZE", required("WORLD_SIZE"), 1, 1 << 20));
  e.rank = static_cast<int>(parse_number("RANK", required("RANK"), 0, 1 << 20));
  if (e.rank >= e.world_size) {
    throw InputError("RANK=" + std::to_string(e.rank) + " is not below WORLD_SIZE=" + std::to_string(e.world_size));
  }
  e.master_addr = required("MASTER_ADDR");
  if (e.master_addr.empty()) throw InputError("MASTER_ADDR is empty");
  e.master_port = static_cast<uint16_t>(parse_number("MASTER_PORT", required("MASTER_PORT"), 1, 65535));
  const char* local_world = get("LOCAL_WORLD_SIZE");
  e.local_world_size =
      local_world ? static_cast<int>(parse_number("LOCAL_WORLD_SIZE", local_world, 1, e.world_size)) : e.world_size;
  const char* local = get("LOCAL_RANK");
  e.local_rank = local ? static_cast<int>(parse_number("LOCAL_RANK", local, 0, 1 << 20)) : e.rank % e.local_world_size;
  if (e.local_rank >= e.local_world_size) {
    throw InputError("LOCAL_RANK=" + std::to_string(e.local_rank) +
                     " is not below LOCAL_WORLD_SIZE=" + std::to_string(e.local_world_size));
  }
  return e;
}

DistEnv dist_env_from_process() {
  return dist_env_from([](const char* name) { return std::getenv(name); });
}

}  // namespace trainbench::dist
