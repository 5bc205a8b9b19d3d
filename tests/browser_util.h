// The headless-browser check of trainbench's HTML pages (report, board): Chromium opens the page, the
// page's own script writes its status line after drawing ("charts=N canvases=N drawn=N errors=N"),
// and a screenshot is saved beside the test binary (test-artifacts/NAME.png) for a person to look at.
#pragma once
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>

#include "cli_util.h"

namespace trainbench {
namespace test {

inline std::string find_chromium() {
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"})
    if (std::filesystem::exists(p)) return p;
  return "";
}

struct PageStatus {
  int charts = -1, canvases = -1, drawn = -1, errors = -1;
  std::string dom;  // the page as the browser left it
};

// Opens the page in headless Chromium, returns the status line the page wrote after drawing, and saves
// a screenshot next to the test binary (build dir/test-artifacts/NAME.png).
inline PageStatus open_in_chromium(const std::filesystem::path& page, const std::string& name) {
  const std::string chromium = find_chromium();
  if (chromium.empty()) {
    ADD_FAILURE() << "chromium is not installed: the report test needs it (apt-get install chromium, or run "
                     "scripts/setup/setup-deps.sh)";
    return {};
  }
  const std::filesystem::path dir = page.parent_path();
  const std::filesystem::path artifacts = std::filesystem::path(TRAINBENCH_EXE).parent_path() / "test-artifacts";
  std::filesystem::create_directories(artifacts);
  const std::string flags =
      " --headless --no-sandbox --disable-gpu --disable-background-networking --no-first-run "
      "--disable-dev-shm-usage --user-data-dir=" +
      (dir / "profile").string() + " --virtual-time-budget=5000 --window-size=1400,3000 ";
  const std::filesystem::path dom = dir / "dom.html", log = dir / "chromium.log";
  int code = shell("timeout 120 " + chromium + flags + "--dump-dom file://" + page.string() + " > " + dom.string() +
                   " 2> " + log.string());
  EXPECT_EQ(code, 0) << slurp(log);
  const std::filesystem::path png = artifacts / (name + ".png");
  std::filesystem::remove(png);
  code = shell("timeout 120 " + chromium + flags + "--screenshot=" + png.string() + " file://" + page.string() +
               " > /dev/null 2>> " + log.string());
  EXPECT_EQ(code, 0) << slurp(log);
  EXPECT_TRUE(std::filesystem::exists(png) && std::filesystem::file_size(png) > 10000) << "no screenshot at " << png;

  const std::string text = slurp(dom);
  std::smatch m;
  const std::regex re(R"(id="tb-status">charts=(\d+) canvases=(\d+) drawn=(\d+) errors=(\d+))");
  if (!std::regex_search(text, m, re)) {
    ADD_FAILURE() << "no status line in the page after loading; chromium said:\n" << slurp(log);
    return {};
  }
  return {std::stoi(m[1]), std::stoi(m[2]), std::stoi(m[3]), std::stoi(m[4]), text};
}

}  // namespace test
}  // namespace trainbench
