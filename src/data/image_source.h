// Batches from an ImageFolder of JPEGs and PNGs: each epoch is a shuffle of the files with a fixed seed,
// each image is read from disk when its batch is made (nothing is loaded at start), then decoded,
// cropped, flipped and resized into the batch (data/decode_crop.h). A file that does not decode is skipped and counted;
// the next file of the epoch takes its place.
#pragma once
#include <torch/torch.h>

#include <mutex>
#include <set>
#include <string>

#include "data/augment.h"
#include "data/decode_crop.h"
#include "data/image_folder.h"
#include "data/loader.h"

namespace trainbench::data {

struct ImageSourceOptions {
  int64_t batch = 1;
  int width = 224, height = 224;      // the crop's output size
  bool channels_last = false;         // the batch's memory format: NCHW or channels-last
  at::ScalarType dtype = at::kFloat;  // the dtype the case trains in (pure precisions)
  uint64_t seed = 0;
  bool pin_memory = false;  // GPU cases: page-locked batches, so the copy to the device is asynchronous
  // The images as uint8 pixels (cropped, resized, flipped, not normalized; `dtype` ignored): the device
  // normalizes them (--data-transfer uint8, data/device_feed.h).
  bool uint8 = false;
  int64_t max_pixels = max_image_pixels();  // a file whose header claims more is skipped
};

class ImageFolderSource final : public BatchSource {
 public:
  ImageFolderSource(ImageFolder folder, ImageSourceOptions options);
  // {images (batch, 3, height, width) in `dtype` or uint8, labels (batch, int64)}; items: the file indices.
  Batch make(int64_t index, StageTimes& times) override;
  LoaderStats describe() const override;
  const ImageFolder& folder() const { return folder_; }

  // The file at position `position` of the endless sequence of shuffled epochs (epoch = position / files).
  int64_t file_at(int64_t position) const;

 private:
  // Decodes and augments file `file` into `dst`; false (the file counted as skipped) when it does not decode.
  // `dst` points at a float image, or a uint8 one when options_.uint8.
  bool load(int64_t file, uint64_t sample_seed, void* dst, StageTimes& times);
  void skip(int64_t file, const std::string& why);  // counts a file that does not decode, and why

  ImageFolder folder_;
  ImageSourceOptions options_;
  uint64_t id_ = 0;
  mutable std::mutex mu_;
  std::set<int64_t> bad_;  // files that failed to decode
  std::string first_bad_, first_bad_reason_;
};

}  // namespace trainbench::data
