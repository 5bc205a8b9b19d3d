// Seconds on the monotonic clock since a point: one definition for step timing, loaders and runs.
#pragma once
#include <chrono>

namespace trainbench {

inline double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace trainbench
