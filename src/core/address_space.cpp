#include "core/address_space.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

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

// The text of /proc/self/<name>, at most `n - 1` bytes, NUL-terminated; "" when it cannot be read. It
// reads with read(2) into the caller's buffer on the stack: it runs inside the case being measured (at
// its start, under a limit, as the loader starts), and what it allocated would be a part of the heap
// it measures. On the tuned heap the step's large blocks land by the history of every allocation
// before them (docs/memory.md, "The heap a prediction is for").
void read_proc_self(const char* name, char* buf, size_t n) {
  buf[0] = '\0';
  char path[64];
  std::snprintf(path, sizeof path, "/proc/self/%s", name);
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  size_t got = 0;
  while (got + 1 < n) {
    const ssize_t r = ::read(fd, buf + got, n - 1 - got);
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  ::close(fd);
  buf[got] = '\0';
}

}  // namespace

int64_t address_space_bytes() {
  char buf[256];
  read_proc_self("statm", buf, sizeof buf);
  return std::strtoll(buf, nullptr, 10) * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

int64_t peak_address_space_bytes() {
  char buf[8192];
  read_proc_self("status", buf, sizeof buf);
  const char* at = std::strstr(buf, "VmPeak:");
  return at ? std::strtoll(at + 7, nullptr, 10) * 1024 : 0;
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
