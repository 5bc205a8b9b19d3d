// The case and its descriptor (cases/case.h), in the binary that loads no LibTorch: a case is values.
#include <gtest/gtest.h>

#include "cases/case.h"

namespace trainbench {
namespace {

TEST(CaseDescriptor, RoundTripsEveryField) {
  for (const std::string d :
       {"resnet50:b64:fp32:nchw:cpu", "mobilenet_v2:b16:bf16:nhwc:cuda:1", "vgg16:b32:fp16:nchw:adamw:t4:fwd:cuda",
        "resnet18:b1:fp32:nchw:momentum:cpu", "bert:heads=12,layers=2:b8:bf16:nchw:adam:cuda:0",
        "resnet18:b16:bf16-pure:nhwc:cpu", "bert:layers=2:b8:fp16-pure:nchw:adamw:cuda:0"}) {
    EXPECT_EQ(parse_case(d).descriptor(), d) << d;
  }
}

TEST(CaseDescriptor, PrintThenParseIsIdentity) {
  Case c;
  c.model = "inception3";
  c.batch = 48;
  c.precision = parse_precision("bf16");
  c.layout = Layout::nhwc;
  c.optimizer = "adam";
  c.threads = 2;
  c.device = parse_device("cuda:3");
  const Case back = parse_case(c.descriptor());
  EXPECT_EQ(back.model, "inception3");
  EXPECT_EQ(back.batch, 48);
  EXPECT_EQ(back.precision.str(), "bf16");
  EXPECT_EQ(back.layout, Layout::nhwc);
  EXPECT_EQ(back.optimizer, "adam");
  EXPECT_EQ(back.threads, 2);
  EXPECT_EQ(back.device.str(), "cuda:3");
  EXPECT_FALSE(back.forward_only);
}

TEST(CaseDescriptor, FieldsMayComeInAnyOrderButPrintCanonically) {
  EXPECT_EQ(parse_case("resnet50:nhwc:bf16:b8:cpu").descriptor(), "resnet50:b8:bf16:nhwc:cpu");
  EXPECT_EQ(parse_case("resnet50:b8:cpu").descriptor(), "resnet50:b8:fp32:nchw:cpu");
}

void expect_error(const std::string& d, const std::string& fragment) {
  try {
    (void)parse_case(d);
    FAIL() << "no error for " << d;
  } catch (const DescriptorError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'" + d + "'"), std::string::npos) << msg;  // quotes the whole input
    EXPECT_NE(msg.find(fragment), std::string::npos) << msg;       // and points at the bad part
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;           // on one line
  }
}

TEST(CaseDescriptor, ErrorsQuoteTheInputAndNameTheBadField) {
  expect_error("resnet50:b0:cpu", "'b0'");
  expect_error("resnet50:bx:cpu", "'bx'");
  expect_error("resnet50:b8:fp64:cpu", "'fp64'");
  expect_error("resnet50:b8:tpu", "'tpu'");
  expect_error("resnet50:b8:nchw", "'nchw' is not a device");
  expect_error("resnet50:fp32:cpu", "no batch size");
  expect_error("resnet50:b8::cpu", "empty field");
  expect_error("resnet50:b8:layers:cpu", "'layers'");
  expect_error("resnet50:b8:k=v:cpu", "parameters must follow the model name");
  expect_error("resnet50", "expected MODEL");
}

TEST(CaseDescriptor, ColumnPointsAtTheBadToken) {
  try {
    (void)parse_case("resnet50:b8:fp64:cpu");
    FAIL();
  } catch (const DescriptorError& e) {
    EXPECT_NE(std::string(e.what()).find("column 13"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace trainbench
