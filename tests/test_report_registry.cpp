// compare's join key is the case descriptor without the device.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "report/compare.h"
#include "runner/case.h"

namespace trainbench {
namespace {

// join_key is the case's descriptor up to the device: checked against descriptors written out by hand.
TEST(JoinKey, IsTheDescriptorWithoutTheDevice) {
  struct {
    const char* descriptor;
    const char* key;
  } cases[] = {{"resnet50:b32:fp32:nchw:cpu", "resnet50:b32:fp32:nchw"},
               {"bert:layers=2:b8:bf16:nhwc:adamw:t4:fwd:cuda:1", "bert:layers=2:b8:bf16:nhwc:adamw:t4:fwd"},
               {"convnet:channels=8,variant=separable:b4:fp32:nchw:momentum:cuda", "convnet:channels=8,variant=separable:b4:fp32:nchw:momentum"}};
  for (const auto& c : cases) {
    const Case parsed = parse_case(c.descriptor);
    Record r;
    r.model = parsed.model;
    r.params = parsed.params;
    r.batch_size = parsed.batch;
    r.precision = parsed.precision;
    r.layout = parsed.layout;
    r.optimizer = parsed.optimizer;
    r.threads = parsed.threads;
    r.forward_only = parsed.forward_only;
    EXPECT_EQ(join_key(r, true), c.key);
  }
  // Parameters at their default are left out (convnet's variant conv), and so is the thread count unless asked.
  Record r;
  r.model = "convnet";
  r.precision = "fp32";
  r.layout = "nchw";
  r.optimizer = "sgd";
  r.params = {{"variant", "conv"}, {"depth", "2"}};
  r.batch_size = 2;
  r.threads = 3;
  EXPECT_EQ(join_key(r, false), "convnet:depth=2:b2:fp32:nchw");
  EXPECT_EQ(join_key(r, true), "convnet:depth=2:b2:fp32:nchw:t3");
}

}  // namespace
}  // namespace trainbench
