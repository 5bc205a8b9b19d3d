#include "workloads/script_load.h"

#include <sys/stat.h>
#include <torch/version.h>

#include <algorithm>
#include <cctype>
#include <regex>
#include <stdexcept>
#include <vector>

namespace trainbench {

// The line of an error that says what went wrong: its first, except for the TorchScript interpreter.
std::string message_line(const std::string& text) {
  std::vector<std::string> lines;
  for (size_t from = 0; from <= text.size();) {
    const size_t end = std::min(text.find('\n', from), text.size());
    std::string l = text.substr(from, end - from);
    while (!l.empty() && std::isspace(static_cast<unsigned char>(l.back()))) l.pop_back();
    lines.push_back(l);
    from = end + 1;
  }
  // The TorchScript interpreter's error starts with its own line, then one or two tracebacks (a
  // "Traceback of TorchScript ..." header, then "File" and source lines, or a traced model's
  // "path.py(459): function" lines), and ends with the model's message after its exception's name
  // ("builtins.RuntimeError: boom", "IndexError: index out of range in self"), which may itself span
  // lines: the user needs that message's first line, the first after the last traceback's header that
  // starts with an exception's name and a colon (else the last unindented line that is no header).
  if (lines.front().rfind("The following operation failed in the TorchScript interpreter", 0) == 0) {
    static const std::regex raised(R"(^[A-Za-z_][A-Za-z0-9_.]*(Error|Exception|Interrupt|Exit|Warning)[A-Za-z0-9_]*:)");
    size_t header = 0;
    for (size_t i = 0; i < lines.size(); ++i) {
      if (lines[i].rfind("Traceback", 0) == 0) header = i;
    }
    for (size_t i = header + 1; i < lines.size(); ++i) {
      if (std::regex_search(lines[i], raised)) return lines[i];
    }
    for (size_t i = lines.size(); i-- > 1;) {
      if (!lines[i].empty() && !std::isspace(static_cast<unsigned char>(lines[i][0])) &&
          lines[i].rfind("Traceback", 0) != 0) {
        return lines[i];
      }
    }
  }
  return lines.front();
}

namespace {

std::string libtorch_version() { return TORCH_VERSION; }

// torch::jit::load's failure as one line. Two causes get their own words: a file format newer than this
// LibTorch reads (caffe2/serialize/inline_container.cc: "Attempted to read a PyTorch file with version
// N, but the maximum supported version for reading is M"), and an operator this LibTorch lacks (a
// newer PyTorch's op: "Unknown builtin op: aten::..."), which a version check of the format can miss.
std::string load_failure(const std::string& path, const std::string& message) {
  std::smatch m;
  static const std::regex too_new(
      R"(PyTorch file with version (\d+), but the maximum supported version for reading is (\d+))");
  if (std::regex_search(message, m, too_new)) {
    return "TorchScript model '" + path + "' was saved by a newer PyTorch than this build's LibTorch " +
           libtorch_version() + ": its file format version is " + m[1].str() + ", LibTorch " + libtorch_version() +
           " reads up to version " + m[2].str() + " (export it with PyTorch " + libtorch_version() +
           ", or build trainbench against a newer LibTorch)";
  }
  static const std::regex unknown_op(R"(Unknown builtin op: ([A-Za-z0-9_:.]+))");
  if (std::regex_search(message, m, unknown_op)) {
    return "TorchScript model '" + path + "' uses operator " + m[1].str() + ", which this build's LibTorch " +
           libtorch_version() + " does not have (saved by a newer PyTorch?)";
  }
  return "cannot load TorchScript model '" + path + "': " + message_line(message);
}

}  // namespace

void load_precheck(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) throw std::invalid_argument("TorchScript model '" + path + "': no such file");
  if (S_ISDIR(st.st_mode)) throw std::invalid_argument("TorchScript model '" + path + "' is a directory, not a file");
}

torch::jit::Module load_module(const std::string& path) {
  load_precheck(path);
  try {
    return torch::jit::load(path);
  } catch (const c10::Error& e) {
    throw std::invalid_argument(load_failure(path, e.what_without_backtrace()));
  } catch (const std::exception& e) {
    throw std::invalid_argument(load_failure(path, e.what()));
  }
}

}  // namespace trainbench
