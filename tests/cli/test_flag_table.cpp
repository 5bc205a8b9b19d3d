// The command table's flags and where each is declared. Every subcommand's flags are listed from the
// table itself (cli::add_commands, nested subcommands too); the declarations are read from src/cli's
// sources: a call of add_option, add_flag or add_option_function whose first argument names the flag.
// A flag is declared in one place (its subcommand's file, a group of cli/flag_groups.cpp or
// cli/shared_flags.cpp, or a row of the stopping settings' table in core/stopping.cpp, from which
// cli/shared_flags.cpp's add_stop_setting makes the flag), however many subcommands take it.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/flags.h"
#include "core/stopping.h"

namespace fs = std::filesystem;

namespace trainbench {
namespace {

// Flag name -> the subcommands ("store list") that take it.
void collect(const CLI::App& app, const std::string& path, std::map<std::string, std::set<std::string>>& flags) {
  for (const CLI::Option* opt : app.get_options()) {
    for (const auto& name : opt->get_lnames()) flags["--" + name].insert(path);
  }
  for (const CLI::App* sub : app.get_subcommands({})) {
    collect(*sub, path.empty() ? sub->get_name() : path + " " + sub->get_name(), flags);
  }
}

// Flag name -> "file:line" of each declaration in src/cli.
std::map<std::string, std::vector<std::string>> declarations() {
  std::map<std::string, std::vector<std::string>> out;
  const std::regex call(R"(add_(option|flag)(_function<[^>]*>)?\(\s*"([^"]+)\")");
  for (const auto& entry : fs::directory_iterator(fs::path(TRAINBENCH_SOURCE_DIR) / "src" / "cli")) {
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    const std::string s = text.str();
    for (auto it = std::sregex_iterator(s.begin(), s.end(), call); it != std::sregex_iterator(); ++it) {
      const auto line = 1 + std::count(s.begin(), s.begin() + it->position(), '\n');
      std::stringstream names((*it)[3].str());
      for (std::string name; std::getline(names, name, ',');) {
        if (name.rfind("--", 0) == 0)
          out[name].push_back(entry.path().filename().string() + ":" + std::to_string(line));
      }
    }
  }
  for (const StopSetting& s : stop_settings()) out[stop_flag(s)].push_back(std::string("stopping.cpp: ") + s.name);
  return out;
}

TEST(FlagTable, EveryFlagOfTheCommandTableIsDeclaredOnce) {
  CLI::App app;
  (void)cli::add_commands(app);
  std::map<std::string, std::set<std::string>> flags;
  collect(app, "", flags);
  flags.erase("--help");  // CLI11's own
  ASSERT_GT(flags.size(), 50u) << "the command table should list every subcommand's flags";
  const auto declared = declarations();
  for (const auto& [flag, subcommands] : flags) {
    const auto it = declared.find(flag);
    ASSERT_NE(it, declared.end()) << flag << " (taken by " << *subcommands.begin()
                                  << ") is declared nowhere the scan looks: the scan misses a form of declaration";
    std::string where;
    for (const auto& w : it->second) where += " " + w;
    EXPECT_EQ(it->second.size(), 1u) << flag << " is declared more than once:" << where;
  }
}

}  // namespace
}  // namespace trainbench
