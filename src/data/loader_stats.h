// What an input pipeline reports about itself: read by the runner after the measured steps, turned
// into the Record's `data` object (data/data_info.h). Plain data, no LibTorch.
#pragma once
#include <cstdint>
#include <string>

namespace trainbench {

struct LoaderStats {
  std::string kind;            // images | tokens
  std::string source;          // the --data path
  int64_t files = 0;           // files (images) or tokens in the source
  int threads = 0;             // loader threads
  int64_t samples = 0;         // samples produced so far (images decoded and augmented, or windows cut)
  int64_t bytes = 0;           // bytes read from files so far
  double busy_thread_s = 0.0;  // the threads' time spent producing, summed (not waiting on a full queue)
  // Thread time by stage, summed over threads: reading files, decoding, augmenting (crop, resize, flip,
  // normalize into the batch), copying (the batch to its dtype and layout). Tokens: all in augment.
  double read_s = 0.0, decode_s = 0.0, augment_s = 0.0, copy_s = 0.0;
  int64_t skipped_files = 0;  // corrupt, truncated or non-JPEG files skipped (distinct files)
  std::string first_skipped;  // the first of them; empty when none
  std::string first_skipped_reason;  // why it was skipped ("Permission denied", "its header claims ...")
  int64_t max_image_pixels = 0;      // images: the pixel limit in effect (0: not an image source)
  std::string transfer;       // what a batch's input travels as: float | uint8 (images), ids (tokens)
};

}  // namespace trainbench
