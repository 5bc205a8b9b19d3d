// Journal writing (append + fsync per case) and reading (tolerating only a torn last line).
#include "results/journal.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/sysmacros.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/input_file.h"
#include "results/results_file.h"

namespace trainbench {

std::string journal_path_for(const std::string& output_path) { return output_path + ".journal"; }

namespace {

std::string errno_text() { return std::strerror(errno); }

// Length of `text` up to and including its last newline: what remains once a torn last line is cut.
size_t complete_length(const std::string& text) {
  const auto nl = text.rfind('\n');
  return nl == std::string::npos ? 0 : nl + 1;
}

std::string header_line(const Context& context, const std::optional<PlanIdentity>& plan) {
  nlohmann::json h = {{"journal", kJournalVersion}, {"context", to_json(context)}};
  if (plan) h["plan"] = {{"cases", plan->cases}, {"settings", plan->settings}};
  return h.dump() + "\n";
}

PlanIdentity plan_from_json(const nlohmann::json& j) {
  PlanIdentity p;
  if (!j.is_object() || !j.contains("cases") || !j["cases"].is_array() || !j.contains("settings") ||
      !j["settings"].is_object())
    throw std::runtime_error("expected {\"cases\": [...], \"settings\": {...}}");
  for (const auto& c : j["cases"]) {
    if (!c.is_string()) throw std::runtime_error("\"cases\" must hold strings");
    p.cases.push_back(c.get<std::string>());
  }
  for (const auto& [k, v] : j["settings"].items()) {
    if (!v.is_string()) throw std::runtime_error("\"settings\" values must be strings");
    p.settings[k] = v.get<std::string>();
  }
  return p;
}

// The pid holding a flock on the file open as `fd`, from /proc/locks; 0 when not found.
long flock_holder(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return 0;
  std::ifstream locks("/proc/locks");
  std::string line;
  const std::string dev = fmt::format("{:02x}:{:02x}:{}", major(st.st_dev), minor(st.st_dev), st.st_ino);
  while (std::getline(locks, line)) {
    std::istringstream in(line);
    std::string id, kind, mode, access, pid, where;
    in >> id >> kind;
    if (kind == "->") continue;  // a waiter, listed under the holder
    in >> mode >> access >> pid >> where;
    if (kind == "FLOCK" && where == dev) return std::atol(pid.c_str());
  }
  return 0;
}

}  // namespace

std::string plan_difference(const PlanIdentity& was, const PlanIdentity& now) {
  std::vector<std::string> parts;
  std::set<std::string> keys;
  for (const auto& [k, v] : was.settings) keys.insert(k);
  for (const auto& [k, v] : now.settings) keys.insert(k);
  for (const auto& k : keys) {
    const auto a = was.settings.find(k), b = now.settings.find(k);
    const std::string va = a == was.settings.end() ? "unset" : a->second;
    const std::string vb = b == now.settings.end() ? "unset" : b->second;
    if (va != vb) parts.push_back(k + " was " + va + ", now " + vb);
  }
  const std::set<std::string> a(was.cases.begin(), was.cases.end()), b(now.cases.begin(), now.cases.end());
  auto only = [](const std::set<std::string>& x, const std::set<std::string>& y, const std::string& where) {
    std::vector<std::string> diff;
    for (const auto& c : x)
      if (!y.count(c)) diff.push_back(c);
    if (diff.empty()) return std::string();
    std::string s = fmt::format("{} case(s) only in {} ({}", diff.size(), where, diff.front());
    if (diff.size() > 1) s += ", ...";
    return s + ")";
  };
  if (const std::string s = only(a, b, "the journal's plan"); !s.empty()) parts.push_back(s);
  if (const std::string s = only(b, a, "this plan"); !s.empty()) parts.push_back(s);
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

Journal::~Journal() { close(); }

void Journal::close() {
  if (fd_ < 0) return;
  struct stat st {};
  // A lock taken for a run that stopped before writing anything leaves no empty journal behind.
  if (created_ && ::fstat(fd_, &st) == 0 && st.st_size == 0) ::unlink(path_.c_str());
  ::close(fd_);  // releases the lock
  fd_ = -1;
  created_ = false;
}

void Journal::lock(const std::string& path) {
  close();
  path_ = path;
  created_ = ::access(path.c_str(), F_OK) != 0;
  // O_NONBLOCK: a FIFO at the journal's path must not block the open (it is refused just below).
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK, 0644);
  if (fd_ < 0) {
    created_ = false;
    throw ResultsError(path + ": cannot open journal: " + errno_text());
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    throw ResultsError(path + ": the journal is not a regular file");
  }
  ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_NONBLOCK);
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    const long holder = err == EWOULDBLOCK ? flock_holder(fd_) : 0;
    ::close(fd_);
    fd_ = -1;
    created_ = false;
    if (err != EWOULDBLOCK) throw ResultsError(path + ": cannot lock the journal: " + std::strerror(err));
    throw JournalBusy(path + " is in use by another trainbench run" +
                          (holder > 0 ? fmt::format(" (pid {})", holder) : std::string()) +
                          "; wait for it to finish or write to another -o",
                      holder);
  }
}

void Journal::open(const std::string& path, const Context& context, Mode mode,
                   const std::optional<PlanIdentity>& plan) {
  if (fd_ < 0 || path_ != path) lock(path);
  if (mode == Mode::fresh && ::ftruncate(fd_, 0) != 0) throw ResultsError(path + ": cannot truncate: " + errno_text());

  struct stat st {};
  if (::fstat(fd_, &st) != 0) throw ResultsError(path + ": " + errno_text());
  if (st.st_size > 0) {
    // Resuming: drop a torn last line so the next append does not glue onto it.
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    const size_t keep = complete_length(text);
    if (keep != text.size()) {
      if (::ftruncate(fd_, static_cast<off_t>(keep)) != 0)
        throw ResultsError(path + ": cannot truncate: " + errno_text());
    }
    if (keep > 0) return;
  }
  write_line(header_line(context, plan));
  created_ = false;
}

void Journal::append(const Record& record) {
  if (fd_ < 0) throw ResultsError("journal: append before open");
  write_line(to_json(record).dump() + "\n");
}

void Journal::write_line(const std::string& line) {
  const off_t before = ::lseek(fd_, 0, SEEK_END);
  if (detail::write_all_and_sync(fd_, line)) return;
  const std::string why = errno_text();
  // A line written in part (a full disk) is cut off again, so the journal still ends cleanly.
  if (before >= 0 && ::ftruncate(fd_, before) == 0) ::fsync(fd_);
  throw ResultsError(path_ + ": cannot write journal: " + why);
}

JournalContents read_journal(const std::string& path) {
  std::string text;
  try {
    text = read_input_file(path);
  } catch (const std::runtime_error& e) {
    throw ResultsError(e.what());
  }

  JournalContents out;
  size_t pos = 0;
  int line_no = 0;
  while (pos < text.size()) {
    const auto nl = text.find('\n', pos);
    const bool last_without_newline = nl == std::string::npos;
    const std::string line = text.substr(pos, last_without_newline ? std::string::npos : nl - pos);
    pos = last_without_newline ? text.size() : nl + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = path + ":" + std::to_string(line_no) + ": ";

    nlohmann::json j;
    try {
      j = detail::parse_json_naming_overflow(line);
    } catch (const nlohmann::json::parse_error& e) {
      if (last_without_newline) break;  // torn by a kill mid-write: the case simply did not finish
      throw ResultsError(where + "not valid JSON: " + detail::short_json_error(e));
    } catch (const std::out_of_range& e) {
      throw ResultsError(where + e.what());
    }
    if (j.is_object() && j.contains("journal")) {
      if (line_no != 1) throw ResultsError(where + "journal header in the middle of the file");
      if (!j["journal"].is_number_integer() || j["journal"].get<int64_t>() != kJournalVersion)
        throw ResultsError(where + "journal version " + j["journal"].dump() +
                           " is not supported (this trainbench reads " + std::to_string(kJournalVersion) + ")");
      try {
        out.context = context_from_json(j.contains("context") ? j["context"] : nlohmann::json());
      } catch (const std::runtime_error& e) {
        throw ResultsError(where + "context: " + e.what());
      }
      if (j.contains("plan")) try {
          out.plan = plan_from_json(j["plan"]);
        } catch (const std::runtime_error& e) {
          throw ResultsError(where + "plan: " + e.what());
        }
      continue;
    }
    try {
      out.records.push_back(record_from_json(j));
    } catch (const std::runtime_error& e) {
      throw ResultsError(where + e.what());
    }
  }
  return out;
}

}  // namespace trainbench
