#include "core/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace trainbench {
namespace {

std::string kind_problem(mode_t mode) {
  if (S_ISREG(mode)) return "";
  if (S_ISDIR(mode)) return "is a directory";
  if (S_ISFIFO(mode)) return "is not a regular file (a FIFO)";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "is not a regular file (a device)";
  if (S_ISSOCK(mode)) return "is not a regular file (a socket)";
  return "is not a regular file";
}

std::string errno_problem(int err) { return err == ENOENT ? "no such file" : std::strerror(err); }

}  // namespace

std::string input_file_problem(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return errno_problem(errno);
  return kind_problem(st.st_mode);
}

std::string read_input_file(const std::string& path) {
  // O_NONBLOCK: opening a FIFO returns at once (instead of waiting for a writer); fstat then refuses it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    // A directory opens on Linux, but say it the same way on any system.
    const std::string kind = input_file_problem(path);
    throw std::runtime_error(path + ": " + (kind.empty() || kind == "no such file" ? errno_problem(err) : kind));
  }
  struct stat st {};
  std::string problem = ::fstat(fd, &st) != 0 ? errno_problem(errno) : kind_problem(st.st_mode);
  if (!problem.empty()) {
    ::close(fd);
    throw std::runtime_error(path + ": " + problem);
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  std::string text;
  text.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw std::runtime_error(path + ": cannot read: " + std::strerror(err));
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return text;
}

bool same_file(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) {
    const bool same = fs::equivalent(a, b, ec);
    if (!ec) return same;
  }
  const fs::path pa = fs::weakly_canonical(fs::absolute(a, ec), ec);
  const fs::path pb = fs::weakly_canonical(fs::absolute(b, ec), ec);
  return pa.lexically_normal() == pb.lexically_normal();
}

}  // namespace trainbench
