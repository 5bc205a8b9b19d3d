#include "core/address_space.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <string>

namespace trainbench {
namespace {

// The soft limit set by limit_address_space, without the loader's room (0: none set here).
std::atomic<int64_t> g_limit_base{0};
std::atomic<int64_t> g_loader_room{0};

void set_soft_limit(rlim_t soft) {
  struct rlimit lim {};
  if (getrlimit(RLIMIT_AS, &lim) != 0) return;
  lim.rlim_cur = lim.rlim_max == RLIM_INFINITY ? soft : std::min<rlim_t>(soft, lim.rlim_max);
  setrlimit(RLIMIT_AS, &lim);
}

}  // namespace

int64_t address_space_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0;
  statm >> pages;
  return pages * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

int64_t peak_address_space_bytes() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "VmPeak:") {
      int64_t kb = 0;
      status >> kb;
      return kb * 1024;
    }
    status.ignore(1 << 20, '\n');
  }
  return 0;
}

void limit_address_space(int64_t limit_bytes) {
  const int64_t base = address_space_bytes() + limit_bytes;
  g_limit_base.store(base);
  set_soft_limit(static_cast<rlim_t>(base + g_loader_room.load()));
}

bool address_space_limited() {
  struct rlimit lim {};
  return getrlimit(RLIMIT_AS, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY;
}

LoaderRoom::LoaderRoom() : before_(address_space_bytes()) {
  if (g_limit_base.load() > 0) set_soft_limit(RLIM_INFINITY);
}

LoaderRoom::~LoaderRoom() {
  if (open_) close();
}

int64_t LoaderRoom::close() {
  open_ = false;
  const int64_t room = std::max<int64_t>(0, address_space_bytes() - before_);
  const int64_t total = g_loader_room.fetch_add(room) + room;
  if (g_limit_base.load() > 0) set_soft_limit(static_cast<rlim_t>(g_limit_base.load() + total));
  return room;
}

int64_t loader_room_bytes() { return g_loader_room.load(); }

}  // namespace trainbench
