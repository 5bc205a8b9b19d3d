// PNG decode through libpng, to the packed RGB8 the augment reads, as Pillow's convert("RGB") (what
// torchvision's ImageFolder loader runs) gives it: palette expanded, gray replicated to three channels,
// 16-bit samples cut to their high byte, alpha (and a palette's transparency) dropped, not composited;
// no gamma correction. PNG has no DCT: the whole image is decoded, then cropped.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "data/jpeg.h"

namespace trainbench::data {

// True when `data` starts with the PNG signature (the file's kind is told by its bytes, not its name).
bool is_png(const uint8_t* data, size_t size);

// The size the header (the IHDR chunk right after the signature) claims, read before any decoding or
// allocation; false when the bytes are too short or the first chunk is not IHDR.
bool png_size(const uint8_t* data, size_t size, int& width, int& height);

// Decodes into `out` (its buffer reused); false with `error` set on a corrupt or truncated file.
bool decode_png(const uint8_t* data, size_t size, RgbImage& out, std::string& error);

}  // namespace trainbench::data
