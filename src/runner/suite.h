// Suites: declarative experiment grids in TOML (suites/*.toml; format in docs/suites.md).
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runner/plan.h"

namespace trainbench {

// Measurement settings a suite may fix; unset ones keep the command line's (or built-in) values.
struct SuiteSettings {
  // A stopping setting's value by its name (core/stopping.h: the key is the setting's name), in its
  // flag's unit (max_noise: percent).
  std::map<std::string, double> stopping;
  std::optional<double> timeout;
  std::optional<std::string> memory_limit;
  std::optional<int64_t> max_image_pixels;
  std::map<std::string, std::string> origin;  // key -> "FILE:LINE: key", for messages about a value set here
};

struct Suite {
  std::string name;
  std::string path;
  std::string description;
  SuiteSettings settings;
  std::vector<Sweep> groups;
};

// `name_or_path` is a built-in suite name (suites/NAME.toml) or a path to a .toml file.
// Throws InputError with "FILE:LINE: what is wrong" for a malformed suite.
Suite load_suite(const std::string& name_or_path);

// Built-in suites found in the suites directory, by name.
std::vector<std::string> builtin_suites();

// Where built-in suites live: $TRAINBENCH_SUITES, else the source tree's suites/.
std::string suites_directory();

}  // namespace trainbench
