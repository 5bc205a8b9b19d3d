// Photo-like JPEGs for trying the image pipeline without ImageNet: smooth structure (a lit gradient,
// soft-edged shapes) plus texture at several scales and sensor grain, so that a JPEG encoder works as
// hard as on a photo (noise would be far harder, flat colour far easier). Sizes spread around
// ImageNet's typical 400 x 350; quality 90.
#pragma once
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace trainbench::data {

// One w x h packed RGB image.
std::vector<uint8_t> make_photo(int width, int height, std::mt19937_64& rng);

struct MadeData {
  int64_t files = 0;
  int64_t bytes = 0;
};

// Writes `images` JPEGs into DIR/classNNN/imgNNNNNN.jpg, spread evenly over `classes`. Throws DataError
// when DIR holds anything already (nothing is mixed into an existing dataset).
MadeData make_dataset(const std::string& dir, int64_t images, int classes, uint64_t seed);

}  // namespace trainbench::data
