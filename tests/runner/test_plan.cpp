#include <gtest/gtest.h>

#include "cases/case.h"
#include "runner/plan.h"

namespace trainbench {
namespace {

TEST(Plan, IsTheCartesianProductInOrder) {
  Sweep s;
  s.models = {"resnet18", "alexnet"};
  s.batches = {8, 16};
  s.precisions = {"fp32", "bf16"};
  s.devices = {"cpu"};
  const auto plan = make_plan(s);
  ASSERT_EQ(plan.size(), 8u);
  EXPECT_EQ(plan[0].descriptor(), "resnet18:b8:fp32:nchw:cpu");
  EXPECT_EQ(plan[1].descriptor(), "resnet18:b8:bf16:nchw:cpu");
  EXPECT_EQ(plan[2].descriptor(), "resnet18:b16:fp32:nchw:cpu");
  EXPECT_EQ(plan[7].descriptor(), "alexnet:b16:bf16:nchw:cpu");
}

TEST(Plan, RejectsBadValuesWithOneLine) {
  Sweep s;
  s.models = {"resnet51"};
  s.batches = {8};
  s.devices = {"cpu"};
  EXPECT_THROW(make_plan(s), InputError);
  s.models = {"resnet50"};
  s.precisions = {"fp8"};
  try {
    make_plan(s);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'fp8'"), std::string::npos);
  }
  s.precisions = {"fp32"};
  s.devices = {"gpu"};
  EXPECT_THROW(make_plan(s), InputError);
  s.devices = {"cpu"};
  s.batches = {};
  EXPECT_THROW(make_plan(s), InputError);
}

TEST(Plan, ParsesListsAndSizes) {
  EXPECT_EQ(parse_int_list("16, 32,64", "batch size"), (std::vector<int64_t>{16, 32, 64}));
  EXPECT_THROW(parse_int_list("16,,32", "batch size"), InputError);
  EXPECT_THROW(parse_int_list("0", "batch size"), InputError);
  EXPECT_THROW(parse_int_list("-4", "batch size"), InputError);
  EXPECT_THROW(parse_int_list("8x", "batch size"), InputError);
  EXPECT_EQ(parse_size("4G", "memory limit"), 4LL << 30);
  EXPECT_EQ(parse_size("512MiB", "memory limit"), 512LL << 20);
  EXPECT_EQ(parse_size("1.5k", "memory limit"), 1536);
  EXPECT_EQ(parse_size("1000", "memory limit"), 1000);
  EXPECT_THROW(parse_size("4Q", "memory limit"), InputError);
  EXPECT_THROW(parse_size("-1G", "memory limit"), InputError);
  EXPECT_THROW(parse_size("lots", "memory limit"), InputError);
}

}  // namespace
}  // namespace trainbench
