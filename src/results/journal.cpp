// Journal writing (append + fsync per case) and reading (tolerating only a torn last line).
#include "results/journal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

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

std::string header_line(const Context& context) {
  nlohmann::json h = {{"journal", kJournalVersion}, {"context", to_json(context)}};
  return h.dump() + "\n";
}

}  // namespace

Journal::~Journal() { close(); }

void Journal::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void Journal::open(const std::string& path, const Context& context, Mode mode) {
  close();
  path_ = path;
  int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC;
  if (mode == Mode::fresh) flags |= O_TRUNC;
  fd_ = ::open(path.c_str(), flags, 0644);
  if (fd_ < 0) throw ResultsError(path + ": cannot open journal: " + errno_text());

  struct stat st{};
  if (::fstat(fd_, &st) != 0) throw ResultsError(path + ": " + errno_text());
  if (st.st_size > 0) {
    // Resuming: drop a torn last line so the next append does not glue onto it.
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    const size_t keep = complete_length(text);
    if (keep != text.size()) {
      if (::ftruncate(fd_, static_cast<off_t>(keep)) != 0) throw ResultsError(path + ": cannot truncate: " + errno_text());
    }
    if (keep > 0) return;
  }
  write_line(header_line(context));
}

void Journal::append(const Record& record) {
  if (fd_ < 0) throw ResultsError("journal: append before open");
  write_line(to_json(record).dump() + "\n");
}

void Journal::write_line(const std::string& line) {
  if (!detail::write_all_and_sync(fd_, line)) throw ResultsError(path_ + ": cannot write journal: " + errno_text());
}

JournalContents read_journal(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw ResultsError(path + (errno == ENOENT ? std::string(": no such file") : ": cannot open: " + errno_text()));
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();

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
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error& e) {
      if (last_without_newline) break;  // torn by a kill mid-write: the case simply did not finish
      throw ResultsError(where + "not valid JSON: " + detail::short_json_error(e));
    }
    if (j.is_object() && j.contains("journal")) {
      if (line_no != 1) throw ResultsError(where + "journal header in the middle of the file");
      if (!j["journal"].is_number_integer() || j["journal"].get<int64_t>() != kJournalVersion)
        throw ResultsError(where + "journal version " + j["journal"].dump() + " is not supported (this trainbench reads " +
                           std::to_string(kJournalVersion) + ")");
      try {
        out.context = context_from_json(j.contains("context") ? j["context"] : nlohmann::json());
      } catch (const std::runtime_error& e) {
        throw ResultsError(where + "context: " + e.what());
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
