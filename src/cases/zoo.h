// The CNN zoo as a table, without LibTorch: each model's name, input, default batch and one line of
// description. models/registry.h builds each one by name.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace trainbench::models {

struct ZooModel {
  std::string name;                  // e.g. "resnet50"
  std::string family;                // "cnn" for the tf_cnn_benchmarks zoo
  std::vector<int64_t> input_shape;  // one sample, e.g. {3, 224, 224}
  int64_t default_batch = 32;        // tf_cnn_benchmarks' usual per-device batch
  int64_t num_classes = 1000;
  std::string description;  // one line for `trainbench list`
};

// Every model of the zoo, in the order `trainbench list` shows them.
const std::vector<ZooModel>& zoo_models();

}  // namespace trainbench::models
