#include "models/inception.h"

#include "models/layers.h"

namespace trainbench::models {
namespace {

using torch::nn::Sequential;

torch::nn::MaxPool2d max_pool_s2() { return torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(3).stride(2)); }
// 3x3 stride-1 average pool of the pooling branches; v3 counts the zero padding, v4 does not.
torch::nn::AvgPool2d avg_pool_s1(bool count_include_pad) {
  return torch::nn::AvgPool2d(torch::nn::AvgPool2dOptions(3).stride(1).padding(1).count_include_pad(count_include_pad));
}
// Factorised 7x7 and 3x3 convs: 1xk and kx1 with "same" padding.
ConvBnAct conv_1xk(int64_t in, int64_t out, int64_t k) { return basic_conv(in, out, {1, k}, 1, {0, k / 2}); }
ConvBnAct conv_kx1(int64_t in, int64_t out, int64_t k) { return basic_conv(in, out, {k, 1}, 1, {k / 2, 0}); }

// ---- Inception v3 (torchvision's InceptionA..E) ----

Branches v3_a(int64_t in, int64_t pool_features) {
  Branches b;
  b->add("branch1x1", Sequential(basic_conv(in, 64, 1)))
      .add("branch5x5", Sequential(basic_conv(in, 48, 1), basic_conv(48, 64, 5, 1, 2)))
      .add("branch3x3dbl", Sequential(basic_conv(in, 64, 1), basic_conv(64, 96, 3, 1, 1), basic_conv(96, 96, 3, 1, 1)))
      .add("branch_pool", Sequential(avg_pool_s1(true), basic_conv(in, pool_features, 1)));
  return b;
}

Branches v3_b(int64_t in) {
  Branches b;
  b->add("branch3x3", Sequential(basic_conv(in, 384, 3, 2)))
      .add("branch3x3dbl", Sequential(basic_conv(in, 64, 1), basic_conv(64, 96, 3, 1, 1), basic_conv(96, 96, 3, 2)))
      .add("branch_pool", Sequential(max_pool_s2()));
  return b;
}

Branches v3_c(int64_t in, int64_t c7) {
  Branches b;
  b->add("branch1x1", Sequential(basic_conv(in, 192, 1)))
      .add("branch7x7", Sequential(basic_conv(in, c7, 1), conv_1xk(c7, c7, 7), conv_kx1(c7, 192, 7)))
      .add("branch7x7dbl", Sequential(basic_conv(in, c7, 1), conv_kx1(c7, c7, 7), conv_1xk(c7, c7, 7),
                                      conv_kx1(c7, c7, 7), conv_1xk(c7, 192, 7)))
      .add("branch_pool", Sequential(avg_pool_s1(true), basic_conv(in, 192, 1)));
  return b;
}

Branches v3_d(int64_t in) {
  Branches b;
  b->add("branch3x3", Sequential(basic_conv(in, 192, 1), basic_conv(192, 320, 3, 2)))
      .add("branch7x7x3",
           Sequential(basic_conv(in, 192, 1), conv_1xk(192, 192, 7), conv_kx1(192, 192, 7), basic_conv(192, 192, 3, 2)))
      .add("branch_pool", Sequential(max_pool_s2()));
  return b;
}

// A 1x3 and a 3x1 conv side by side on the same input (Inception v3's E and v4's C blocks).
Branches split_1x3_3x1(int64_t in, int64_t out) {
  Branches b;
  b->add("a", Sequential(conv_1xk(in, out, 3))).add("b", Sequential(conv_kx1(in, out, 3)));
  return b;
}

Branches v3_e(int64_t in) {
  Branches b;
  b->add("branch1x1", Sequential(basic_conv(in, 320, 1)))
      .add("branch3x3", Sequential(basic_conv(in, 384, 1), split_1x3_3x1(384, 384)))
      .add("branch3x3dbl", Sequential(basic_conv(in, 448, 1), basic_conv(448, 384, 3, 1, 1), split_1x3_3x1(384, 384)))
      .add("branch_pool", Sequential(avg_pool_s1(true), basic_conv(in, 192, 1)));
  return b;
}

// ---- Inception v4 ----

Sequential v4_stem() {
  Branches mixed_3a;  // 64 -> 160 channels, 147 -> 73
  mixed_3a->add("pool", Sequential(max_pool_s2())).add("conv", Sequential(basic_conv(64, 96, 3, 2)));
  Branches mixed_4a;  // 160 -> 192 channels, 73 -> 71
  mixed_4a->add("branch0", Sequential(basic_conv(160, 64, 1), basic_conv(64, 96, 3)))
      .add("branch1",
           Sequential(basic_conv(160, 64, 1), conv_1xk(64, 64, 7), conv_kx1(64, 64, 7), basic_conv(64, 96, 3)));
  Branches mixed_5a;  // 192 -> 384 channels, 71 -> 35
  mixed_5a->add("conv", Sequential(basic_conv(192, 192, 3, 2))).add("pool", Sequential(max_pool_s2()));
  Sequential stem;
  stem->push_back("conv1", basic_conv(3, 32, 3, 2));
  stem->push_back("conv2", basic_conv(32, 32, 3));
  stem->push_back("conv3", basic_conv(32, 64, 3, 1, 1));
  stem->push_back("mixed_3a", mixed_3a);
  stem->push_back("mixed_4a", mixed_4a);
  stem->push_back("mixed_5a", mixed_5a);
  return stem;
}

Branches v4_a() {  // 384 -> 384 at 35x35
  Branches b;
  b->add("branch0", Sequential(basic_conv(384, 96, 1)))
      .add("branch1", Sequential(basic_conv(384, 64, 1), basic_conv(64, 96, 3, 1, 1)))
      .add("branch2", Sequential(basic_conv(384, 64, 1), basic_conv(64, 96, 3, 1, 1), basic_conv(96, 96, 3, 1, 1)))
      .add("branch3", Sequential(avg_pool_s1(false), basic_conv(384, 96, 1)));
  return b;
}

Branches v4_reduction_a() {  // 384 -> 1024, 35 -> 17
  Branches b;
  b->add("branch0", Sequential(basic_conv(384, 384, 3, 2)))
      .add("branch1", Sequential(basic_conv(384, 192, 1), basic_conv(192, 224, 3, 1, 1), basic_conv(224, 256, 3, 2)))
      .add("branch2", Sequential(max_pool_s2()));
  return b;
}

Branches v4_b() {  // 1024 -> 1024 at 17x17
  Branches b;
  b->add("branch0", Sequential(basic_conv(1024, 384, 1)))
      .add("branch1", Sequential(basic_conv(1024, 192, 1), conv_1xk(192, 224, 7), conv_kx1(224, 256, 7)))
      .add("branch2", Sequential(basic_conv(1024, 192, 1), conv_kx1(192, 192, 7), conv_1xk(192, 224, 7),
                                 conv_kx1(224, 224, 7), conv_1xk(224, 256, 7)))
      .add("branch3", Sequential(avg_pool_s1(false), basic_conv(1024, 128, 1)));
  return b;
}

Branches v4_reduction_b() {  // 1024 -> 1536, 17 -> 8
  Branches b;
  b->add("branch0", Sequential(basic_conv(1024, 192, 1), basic_conv(192, 192, 3, 2)))
      .add("branch1", Sequential(basic_conv(1024, 256, 1), conv_1xk(256, 256, 7), conv_kx1(256, 320, 7),
                                 basic_conv(320, 320, 3, 2)))
      .add("branch2", Sequential(max_pool_s2()));
  return b;
}

Branches v4_c() {  // 1536 -> 1536 at 8x8
  Branches b;
  b->add("branch0", Sequential(basic_conv(1536, 256, 1)))
      .add("branch1", Sequential(basic_conv(1536, 384, 1), split_1x3_3x1(384, 256)))
      .add("branch2",
           Sequential(basic_conv(1536, 384, 1), conv_kx1(384, 448, 3), conv_1xk(448, 512, 3), split_1x3_3x1(512, 256)))
      .add("branch3", Sequential(avg_pool_s1(false), basic_conv(1536, 256, 1)));
  return b;
}

}  // namespace

Inception3Impl::Inception3Impl(int64_t num_classes) {
  Sequential f;
  f->push_back("Conv2d_1a_3x3", basic_conv(3, 32, 3, 2));
  f->push_back("Conv2d_2a_3x3", basic_conv(32, 32, 3));
  f->push_back("Conv2d_2b_3x3", basic_conv(32, 64, 3, 1, 1));
  f->push_back("maxpool1", max_pool_s2());
  f->push_back("Conv2d_3b_1x1", basic_conv(64, 80, 1));
  f->push_back("Conv2d_4a_3x3", basic_conv(80, 192, 3));
  f->push_back("maxpool2", max_pool_s2());
  f->push_back("Mixed_5b", v3_a(192, 32));
  f->push_back("Mixed_5c", v3_a(256, 64));
  f->push_back("Mixed_5d", v3_a(288, 64));
  f->push_back("Mixed_6a", v3_b(288));
  f->push_back("Mixed_6b", v3_c(768, 128));
  f->push_back("Mixed_6c", v3_c(768, 160));
  f->push_back("Mixed_6d", v3_c(768, 160));
  f->push_back("Mixed_6e", v3_c(768, 192));
  f->push_back("Mixed_7a", v3_d(768));
  f->push_back("Mixed_7b", v3_e(1280));
  f->push_back("Mixed_7c", v3_e(2048));
  features = register_module("features", f);
  dropout = register_module("dropout", torch::nn::Dropout(0.5));
  fc = register_module("fc", torch::nn::Linear(2048, num_classes));
  init_cnn_weights(*this);
}

torch::Tensor Inception3Impl::forward(torch::Tensor x) {
  x = torch::adaptive_avg_pool2d(features->forward(x), {1, 1}).flatten(1);
  return fc->forward(dropout->forward(x));
}

Inception4Impl::Inception4Impl(int64_t num_classes) {
  Sequential f = v4_stem();
  for (int i = 0; i < 4; ++i) f->push_back("inception_a" + std::to_string(i), v4_a());
  f->push_back("reduction_a", v4_reduction_a());
  for (int i = 0; i < 7; ++i) f->push_back("inception_b" + std::to_string(i), v4_b());
  f->push_back("reduction_b", v4_reduction_b());
  for (int i = 0; i < 3; ++i) f->push_back("inception_c" + std::to_string(i), v4_c());
  features = register_module("features", f);
  dropout = register_module("dropout", torch::nn::Dropout(0.2));
  last_linear = register_module("last_linear", torch::nn::Linear(1536, num_classes));
  init_cnn_weights(*this);
}

torch::Tensor Inception4Impl::forward(torch::Tensor x) {
  x = torch::adaptive_avg_pool2d(features->forward(x), {1, 1}).flatten(1);
  return last_linear->forward(dropout->forward(x));
}

}  // namespace trainbench::models
