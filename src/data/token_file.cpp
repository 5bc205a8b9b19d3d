#include "data/token_file.h"

#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <vector>

#include "core/input_file.h"
#include "data/data_error.h"

namespace trainbench::data {
namespace {

// A read of a mapped page that the file no longer covers (it was truncated after it was mapped) raises
// SIGBUS in the reading thread. While a thread copies from a mapping, t_guard points at its jump
// buffer and the handler returns there; a SIGBUS anywhere else keeps its default action.
thread_local sigjmp_buf* t_guard = nullptr;

void on_sigbus(int sig, siginfo_t*, void*) {
  if (t_guard != nullptr) siglongjmp(*t_guard, 1);
  signal(sig, SIG_DFL);
  raise(sig);
}

void install_sigbus_guard() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa {};
    sa.sa_sigaction = on_sigbus;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigaction(SIGBUS, &sa, nullptr);
  });
}

// Copies n ids of `width` bytes from `base` + from into `out`; false when a page was gone. Plain
// loops and no object with a destructor between the jump's two ends.
bool guarded_copy(const void* base, int width, int64_t from, int64_t n, int64_t* out) noexcept {
  sigjmp_buf env;
  if (sigsetjmp(env, 0) != 0) {
    t_guard = nullptr;
    return false;
  }
  t_guard = &env;
  if (width == 2) {
    const uint16_t* p = static_cast<const uint16_t*>(base) + from;
    for (int64_t i = 0; i < n; ++i) out[i] = p[i];
  } else {
    const uint32_t* p = static_cast<const uint32_t*>(base) + from;
    for (int64_t i = 0; i < n; ++i) out[i] = p[i];
  }
  t_guard = nullptr;
  return true;
}

}  // namespace

int token_width(const std::string& dtype) {
  if (dtype == "uint16") return 2;
  if (dtype == "uint32") return 4;
  throw DataError("--data-dtype " + dtype + ": expected uint16 or uint32");
}

TokenFile::TokenFile(const std::string& path, const std::string& dtype) : path_(path), width_(token_width(dtype)) {
  if (const std::string why = input_file_problem(path); !why.empty()) throw DataError("--data " + path + ": " + why);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw DataError("--data " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_size == 0) {
    ::close(fd);
    throw DataError("--data " + path + ": empty file (expected " + dtype + " token ids)");
  }
  bytes_ = static_cast<size_t>(st.st_size);
  if (bytes_ % width_ != 0) {
    ::close(fd);
    throw DataError("--data " + path + ": " + std::to_string(bytes_) + " bytes is not a whole number of " + dtype +
                    " tokens (is --data-dtype right?)");
  }
  tokens_ = static_cast<int64_t>(bytes_ / width_);
  base_ = ::mmap(nullptr, bytes_, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (base_ == MAP_FAILED) {
    base_ = nullptr;
    throw DataError("--data " + path + ": cannot map it (" + std::strerror(errno) + ")");
  }
  ::madvise(base_, bytes_, MADV_RANDOM);  // windows at random offsets: no read-ahead of whole regions
  install_sigbus_guard();
}

void TokenFile::read(int64_t from, int64_t n, int64_t* out) const {
  if (from < 0 || n < 0 || from + n > tokens_) {
    throw DataError("--data " + path_ + ": tokens " + std::to_string(from) + " to " + std::to_string(from + n) +
                    " lie beyond its " + std::to_string(tokens_) + " tokens");
  }
  if (!guarded_copy(base_, width_, from, n, out)) {
    struct stat st {};
    const std::string now = ::stat(path_.c_str(), &st) == 0 ? std::to_string(st.st_size) + " bytes" : "gone";
    throw DataError("--data " + path_ + ": the file shrank while it was read (" + std::to_string(bytes_) +
                    " bytes when opened, " + now + " now; token " + std::to_string(from) + " is no longer there)");
  }
}

TokenFile::~TokenFile() {
  if (base_ != nullptr) ::munmap(base_, bytes_);
}

void TokenFile::scan(const std::function<bool(int64_t, const int64_t*, int64_t)>& visit) const {
  std::vector<int64_t> chunk(std::min<int64_t>(tokens_, 1 << 16));
  for (int64_t from = 0; from < tokens_; from += static_cast<int64_t>(chunk.size())) {
    const int64_t n = std::min<int64_t>(static_cast<int64_t>(chunk.size()), tokens_ - from);
    read(from, n, chunk.data());
    if (!visit(from, chunk.data(), n)) return;
  }
}

int64_t TokenFile::largest_id() const {
  int64_t top = 0;
  scan([&](int64_t, const int64_t* ids, int64_t n) {
    top = std::max(top, *std::max_element(ids, ids + n));
    return true;
  });
  return top;
}

std::optional<TokenFile::BadToken> TokenFile::first_at_or_above(int64_t vocab) const {
  std::optional<BadToken> bad;
  scan([&](int64_t from, const int64_t* ids, int64_t n) {
    for (int64_t i = 0; i < n && !bad; ++i) {
      if (ids[i] >= vocab) bad = BadToken{from + i, ids[i]};
    }
    return !bad;
  });
  return bad;
}

void TokenFile::check_vocab(int64_t vocab) const {
  if (const auto bad = first_at_or_above(vocab)) {
    throw DataError("--data " + path_ + ": token id " + std::to_string(bad->value) + " at offset " +
                    std::to_string(bad->offset) + " (byte " + std::to_string(bad->offset * width_) +
                    ") is not below the model's vocabulary size " + std::to_string(vocab));
  }
}

}  // namespace trainbench::data
