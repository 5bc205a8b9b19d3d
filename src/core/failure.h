// Failures are values: an exception caught inside a measured case (a whole step, a layer, a peak, a
// data-parallel rank) becomes one line and a kind, out of memory or not. Written once, here.
#pragma once
#include <exception>
#include <string>

namespace trainbench {

struct Failure {
  bool out_of_memory = false;
  std::string line;  // one line, without LibTorch's backtrace
};

// Classifies `e`: std::bad_alloc and c10::OutOfMemoryError (the GPU caching allocator's type, 1.13
// and 2.x) by type, other allocation failures (cuBLAS workspace, HIP, a CPU allocation under
// RLIMIT_AS reported by LibTorch) by message.
Failure failure_of(const std::exception_ptr& e);
// Inside a catch block: the exception in flight.
inline Failure current_failure() { return failure_of(std::current_exception()); }

// True when an exception message reports an allocation failure (CPU or GPU).
bool is_out_of_memory_message(const std::string& what);

// The first line of an exception message, trailing blanks removed; "unknown failure" when empty.
std::string first_line(const std::string& what);

}  // namespace trainbench
