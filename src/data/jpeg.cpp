#include "data/jpeg.h"

#include <turbojpeg.h>

#include <stdexcept>

namespace trainbench::data {

int scaled_size(int dimension, ScaleFactor f) { return (dimension * f.num + f.denom - 1) / f.denom; }

ScaleFactor choose_scale(int region_w, int region_h, int out_w, int out_h) {
  int count = 0;
  const tjscalingfactor* factors = tjGetScalingFactors(&count);
  ScaleFactor best{1, 1};
  for (int i = 0; i < count; ++i) {
    const ScaleFactor f{factors[i].num, factors[i].denom};
    if (f.num > f.denom) continue;  // upscaling never helps a crop
    // The region's pixels after scaling, rounded down: the crop must not be upsampled by the scaling.
    const int64_t w = static_cast<int64_t>(region_w) * f.num / f.denom;
    const int64_t h = static_cast<int64_t>(region_h) * f.num / f.denom;
    if (w >= out_w && h >= out_h && f.num * best.denom < best.num * f.denom) best = f;
  }
  return best;
}

JpegDecoder::JpegDecoder() : handle_(tjInitDecompress()) {
  if (handle_ == nullptr) throw std::runtime_error(std::string("TurboJPEG: ") + tjGetErrorStr2(nullptr));
}

JpegDecoder::~JpegDecoder() { tjDestroy(handle_); }

// libjpeg-turbo 2.1's TurboJPEG handle is unusable after a failed call (every later call fails with
// the same error): a decoder that met a corrupt file starts over with a fresh handle.
void JpegDecoder::reset() {
  tjDestroy(handle_);
  handle_ = tjInitDecompress();
  if (handle_ == nullptr) throw std::runtime_error(std::string("TurboJPEG: ") + tjGetErrorStr2(nullptr));
}

bool JpegDecoder::header(const uint8_t* data, size_t size, int& width, int& height) {
  if (size == 0) {
    error_ = "empty file";
    return false;
  }
  int subsampling = 0, colorspace = 0;
  if (tjDecompressHeader3(handle_, data, static_cast<unsigned long>(size), &width, &height, &subsampling,
                          &colorspace) != 0) {
    error_ = tjGetErrorStr2(handle_);
    reset();
    return false;
  }
  if (width <= 0 || height <= 0) {
    error_ = "empty image";
    return false;
  }
  return true;
}

bool JpegDecoder::decode(const uint8_t* data, size_t size, ScaleFactor scale, RgbImage& out) {
  int width = 0, height = 0;
  if (!header(data, size, width, height)) return false;
  out.width = scaled_size(width, scale);
  out.height = scaled_size(height, scale);
  out.pixels.resize(static_cast<size_t>(out.width) * out.height * 3);
  // Exact DCT and upsampling (no TJFLAG_FAST*): the same pixels PIL decodes, so the comparison with
  // torchvision is of speed alone.
  if (tjDecompress2(handle_, data, static_cast<unsigned long>(size), out.pixels.data(), out.width, 0, out.height,
                    TJPF_RGB, 0) != 0) {
    // A warning such as "extraneous bytes before marker" still decodes the whole image (PIL accepts
    // it too); a truncated file ("Premature end of JPEG file") is a warning as well, but its missing
    // rows are grey fill, not the image: refused, as PIL refuses a truncated file.
    error_ = tjGetErrorStr2(handle_);
    const bool warning = tjGetErrorCode(handle_) == TJERR_WARNING;
    reset();
    if (!warning || error_.find("Premature end") != std::string::npos) return false;
  }
  return true;
}

std::vector<uint8_t> encode_jpeg(const uint8_t* rgb, int width, int height, int quality) {
  tjhandle h = tjInitCompress();
  if (h == nullptr) throw std::runtime_error(std::string("TurboJPEG: ") + tjGetErrorStr2(nullptr));
  unsigned char* buf = nullptr;
  unsigned long size = 0;
  const int rc = tjCompress2(h, rgb, width, 0, height, TJPF_RGB, &buf, &size, TJSAMP_420, quality, 0);
  std::string why = rc != 0 ? tjGetErrorStr2(h) : "";
  std::vector<uint8_t> out;
  if (rc == 0) out.assign(buf, buf + size);
  tjFree(buf);
  tjDestroy(h);
  if (rc != 0) throw std::runtime_error("JPEG encode failed: " + why);
  return out;
}

}  // namespace trainbench::data
