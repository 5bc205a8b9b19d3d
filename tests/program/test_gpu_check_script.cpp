// scripts/checks/gpu-check.sh: without its header folder it stops with one clear line.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cli_util.h"

namespace trainbench {
namespace {

TEST(GpuCheckScript, WithoutTheHeaderFolderItStopsWithOneClearLine) {
  namespace fs = std::filesystem;
  const fs::path dir = test::temp_dir("gpu", "check");
  const std::string cmd = "OUT=" + (dir / "out").string() + " TRAINBENCH_THIRD_PARTY=" + (dir / "absent").string() +
                          " bash " + TRAINBENCH_SOURCE_DIR + "/scripts/checks/gpu-check.sh > " +
                          (dir / "o.txt").string() + " 2> " + (dir / "e.txt").string();
  EXPECT_EQ(test::shell(cmd), 2);
  const std::string err = test::slurp(dir / "e.txt");
  EXPECT_EQ(test::count_lines(err), 1) << err;
  EXPECT_NE(err.find("no header-only dependencies in " + (dir / "absent").string()), std::string::npos) << err;
  EXPECT_NE(err.find("scripts/setup/vendor-headers.sh"), std::string::npos) << err;
}

}  // namespace
}  // namespace trainbench
