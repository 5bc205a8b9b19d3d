// docs/json-schema.md as the tests read it: the keys each section documents.
#pragma once
#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace trainbench {

// The keys documented in one "## `section`" of docs/json-schema.md: the first cell of each table row.
inline std::set<std::string> documented_keys(const std::string& section) {
  std::ifstream file(std::string(TRAINBENCH_SOURCE_DIR) + "/docs/json-schema.md", std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  std::istringstream in(text.str());
  std::set<std::string> keys;
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("## ", 0) == 0) inside = line == "## `" + section + "`";
    if (inside && line.rfind("| `", 0) == 0) keys.insert(line.substr(3, line.find('`', 3) - 3));
  }
  return keys;
}

}  // namespace trainbench
