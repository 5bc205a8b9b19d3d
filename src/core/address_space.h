// The process's address space, and a CPU case's limit on it (RLIMIT_AS): how `--memory-limit` tries a
// memory size on a machine with more. The limit is the model's. The data loader's threads (their
// stacks, their malloc arenas) and its prefetch queue are the loader's: a GPU case keeps them in host
// memory, never on the card. So the loader gets room of its own above the limit (LoaderRoom), and the
// footprint a record keeps (memory/probe.h) leaves that room out.
#pragma once
#include <cstdint>

namespace trainbench {

int64_t address_space_bytes();       // now: /proc/self/statm's size
int64_t peak_address_space_bytes();  // the largest it has been: VmPeak, what RLIMIT_AS refuses to exceed

// Limits this process's address space to what it is now plus `limit_bytes` (RLIMIT_AS's soft limit; the
// hard limit is kept, so that room can be added later). Once per case child, before the case builds.
void limit_address_space(int64_t limit_bytes);
// True while a limit set by limit_address_space (or by anyone) is in force.
bool address_space_limited();

// The loader's room. Made before the loader's threads start: the limit is lifted (to the hard limit)
// while only they allocate, filling their queue for the first time; close() then reads how much the
// address space grew and sets the limit to its value plus that growth. Without a limit, it still
// measures. Total room given this process: loader_room_bytes().
class LoaderRoom {
 public:
  LoaderRoom();
  ~LoaderRoom();  // closes if close() was not called (a failed start)
  LoaderRoom(const LoaderRoom&) = delete;
  LoaderRoom& operator=(const LoaderRoom&) = delete;
  int64_t close();  // the room: the address space the loader took, >= 0

 private:
  int64_t before_ = 0;
  bool open_ = true;
};
int64_t loader_room_bytes();

}  // namespace trainbench
