// Every check of a command's output before anything runs (docs/store.md, "Outputs"): writable, not a
// store, not an input. Torch-free: `store export` checks its files with them too.
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "cli/store_flags.h"
#include "core/input_file.h"
#include "core/value_rules.h"

namespace trainbench::cli {

namespace fs = std::filesystem;

namespace {

bool is_sqlite_database(const fs::path& p) {
  char head[16] = {};
  std::ifstream in(p, std::ios::binary);
  return in.read(head, sizeof head) && std::memcmp(head, "SQLite format 3\0", sizeof head) == 0;
}

// Why `p` holds stored runs ("" when it does not): an SQLite database (a store, whichever one), or the
// write-ahead log, shared memory or rollback journal beside one, whose loss loses what they hold.
std::string store_file_problem(const fs::path& p) {
  if (is_sqlite_database(p)) return "it is an SQLite database (a results store)";
  const std::string name = p.string();
  for (const char* suffix : {"-wal", "-shm", "-journal"}) {
    const std::string s = suffix;
    if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0 &&
        is_sqlite_database(name.substr(0, name.size() - s.size()))) {
      return "it belongs to the SQLite store '" + name.substr(0, name.size() - s.size()) + "'";
    }
  }
  return "";
}

}  // namespace

StoreSpec default_store_or_none() {
  try {
    return choose_store("", false);
  } catch (const InputError&) {
    return {};
  }
}

StoreSpec store_of_inputs(const std::vector<std::string>& inputs, const StoreFlags& store_flags) {
  for (const auto& in : inputs) {
    if (in.rfind("store:", 0) == 0) return store_flags.spec();
  }
  return default_store_or_none();
}

std::vector<std::string> store_files(const StoreSpec& spec) {
  if (spec.kind != StoreSpec::Kind::sqlite) return {};
  return {spec.where, spec.where + "-wal", spec.where + "-shm", spec.where + "-journal"};
}

void check_output(const std::string& output, const std::string& flag, const std::vector<std::string>& inputs,
                  const StoreSpec& store) {
  check_writable(output, flag);
  std::vector<std::string> all = inputs;
  for (const auto& f : store_files(store)) all.push_back(f);
  check_not_an_input(output, flag, all);
}

void check_writable(const std::string& output, const std::string& flag) {
  const std::string what = "cannot write " + (flag.empty() ? std::string("output") : flag) + " '" + output + "': ";
  fs::path p(output);
  fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  std::error_code ec;
  if (!fs::exists(dir, ec)) {
    if (!fs::create_directories(dir, ec) || ec) {
      throw InputError(what + "cannot create directory '" + dir.string() + "'");
    }
  }
  if (fs::is_directory(p, ec)) throw InputError(what + "it is a directory");
  if (fs::exists(p, ec) && !fs::is_regular_file(p, ec)) throw InputError(what + "it is not a regular file");
  if (access(dir.c_str(), W_OK) != 0) {
    throw InputError(what + "directory '" + dir.string() + "' is not writable");
  }
  if (fs::exists(p, ec) && access(p.c_str(), W_OK) != 0) {
    throw InputError(what + "file is not writable");
  }
  if (const std::string why = store_file_problem(p); !why.empty()) {
    throw InputError(what + why + ": writing it would destroy the runs it holds");
  }
}

void check_not_an_input(const std::string& output, const std::string& output_flag,
                        const std::vector<std::string>& inputs) {
  for (const auto& in : inputs) {
    if (!in.empty() && same_file(output, in)) {
      throw InputError(output_flag + " '" + output + "' is the same file as the input '" + in +
                       "': writing it would destroy that input");
    }
  }
}

}  // namespace trainbench::cli
