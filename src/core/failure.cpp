#include "core/failure.h"

#include <c10/util/Exception.h>

#include <new>

#include "core/address_space.h"

namespace trainbench {

std::string first_line(const std::string& what) {
  std::string line = what.substr(0, what.find('\n'));
  while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
  return line.empty() ? "unknown failure" : line;
}

bool is_out_of_memory_message(const std::string& what) {
  static const char* const kMarks[] = {"can't allocate memory", "not enough memory",   "out of memory",
                                       "OutOfMemory",           "std::bad_alloc",      "Cannot allocate memory",
                                       "could not allocate",    "hipErrorOutOfMemory", "CUBLAS_STATUS_ALLOC_FAILED"};
  for (const char* m : kMarks) {
    if (what.find(m) != std::string::npos) return true;
  }
  return false;
}

namespace {

// oneDNN reports an allocation that failed while it made a primitive as "could not create a
// primitive", the words it uses for a configuration it cannot run too. Under an address-space limit (a
// --memory-limit case, where allocations fail by design) it is taken as out of memory; without one
// it stays an error.
bool onednn_out_of_memory(const std::string& what) {
  return what.find("could not create a primitive") != std::string::npos && address_space_limited();
}

}  // namespace

Failure failure_of(const std::exception_ptr& e) {
  Failure f;
  try {
    std::rethrow_exception(e);
  } catch (const std::bad_alloc&) {
    f.out_of_memory = true;
    f.line = "out of memory (std::bad_alloc)";
  } catch (const c10::OutOfMemoryError& x) {
    f.out_of_memory = true;
    f.line = first_line(x.what_without_backtrace());
  } catch (const c10::Error& x) {
    const std::string what = x.what_without_backtrace();
    f.out_of_memory = is_out_of_memory_message(what) || onednn_out_of_memory(what);
    f.line = first_line(what);
  } catch (const std::exception& x) {
    f.out_of_memory = is_out_of_memory_message(x.what()) || onednn_out_of_memory(x.what());
    f.line = first_line(x.what());
  } catch (...) {
    f.line = "unknown failure (not a std::exception)";
  }
  return f;
}

}  // namespace trainbench
