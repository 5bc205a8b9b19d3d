// The pixels the model sees, against torchvision's: tests/fixtures/pixels holds JPEGs of odd sizes and, for
// fixed crop boxes and flips, what torchvision's RandomResizedCrop (PIL bilinear with antialias) and
// hflip make of them, written by scripts/fixtures/make-pixel-fixtures.py with Pillow and torchvision. The loader's
// decode (DCT-scaled where the crop allows) and resample must give the same images to within a mean of 1
// grey level and a maximum of 8 per image.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/augment.h"
#include "data/decode_crop.h"
#include "data/jpeg.h"

namespace trainbench {
namespace {

using namespace data;

const std::string kDir = std::string(TRAINBENCH_TEST_DATA) + "/pixels/";

std::vector<uint8_t> slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct PixelCase {
  std::string file;
  int x, y, w, h;
  bool flip;
  int out_w, out_h;
  size_t offset;
};

std::vector<PixelCase> load_cases() {
  std::ifstream in(kDir + "cases.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  std::vector<PixelCase> cases;
  for (const auto& c : j.at("cases")) {
    const auto& b = c.at("box");
    const auto& o = c.at("out");
    cases.push_back({c.at("file").get<std::string>(), b[0].get<int>(), b[1].get<int>(), b[2].get<int>(),
                     b[3].get<int>(), c.at("flip").get<bool>(), o[0].get<int>(), o[1].get<int>(),
                     c.at("offset").get<size_t>()});
  }
  return cases;
}

// Mean and largest absolute difference, in grey levels, of `got` (as doubles) from the expected bytes.
std::pair<double, double> errors(const std::vector<double>& got, const uint8_t* expected) {
  double sum = 0, worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double e = std::fabs(got[i] - expected[i]);
    sum += e;
    worst = std::max(worst, e);
  }
  return {sum / static_cast<double>(got.size()), worst};
}

// Runs the loader's decode, crop, flip and resize on a case, as bytes or as normalized floats mapped
// back to grey levels (x * 255 std + 255 mean), in the fixture's (height, width, RGB) order.
std::vector<double> loader_pixels(const PixelCase& c, bool uint8) {
  const std::vector<uint8_t> jpeg = slurp(kDir + c.file);
  SampleFormat format;
  format.width = c.out_w;
  format.height = c.out_h;
  format.uint8 = uint8;
  format.channels_last = true;
  const size_t n = static_cast<size_t>(c.out_w) * c.out_h * 3;
  std::vector<uint8_t> bytes(n);
  std::vector<float> floats(n);
  DecodeTimes times;
  std::string why;
  const bool ok = decode_crop(
      jpeg.data(), jpeg.size(),
      [&](int width, int height) {
        // The file's name carries the size its header must give.
        EXPECT_EQ(c.file, "photo_" + std::to_string(width) + "x" + std::to_string(height) + ".jpg");
        return Crop{CropBox{double(c.x), double(c.y), double(c.w), double(c.h)}, c.flip};
      },
      format, uint8 ? static_cast<void*>(bytes.data()) : static_cast<void*>(floats.data()), times, why);
  EXPECT_TRUE(ok) << why;
  std::vector<double> out(n);
  for (size_t i = 0; i < n; ++i) {
    const int ch = static_cast<int>(i % 3);
    out[i] = uint8 ? bytes[i] : (floats[i] * kImagenetStd[ch] + kImagenetMean[ch]) * 255.0;
  }
  return out;
}

TEST(Pixels, LoaderMatchesTorchvisionWithinOneGreyLevelOnAverageAndEightAtMost) {
  const std::vector<PixelCase> cases = load_cases();
  ASSERT_EQ(cases.size(), 18u);
  const std::vector<uint8_t> expected = slurp(kDir + "expected.u8");
  std::set<std::pair<int, int>> scales;  // the DCT scales the cases exercise, as num/8
  for (const PixelCase& c : cases) {
    const ScaleFactor s = decode_scale(c.w, c.h, c.out_w, c.out_h);
    scales.insert({s.num * 8 / s.denom, 8});
    const size_t n = static_cast<size_t>(c.out_w) * c.out_h * 3;
    ASSERT_LE(c.offset + n, expected.size());
    for (bool uint8 : {true, false}) {
      const auto [mean, worst] = errors(loader_pixels(c, uint8), expected.data() + c.offset);
      const std::string what = c.file + " box " + std::to_string(c.x) + "," + std::to_string(c.y) + " " +
                               std::to_string(c.w) + "x" + std::to_string(c.h) + " to " + std::to_string(c.out_w) +
                               "x" + std::to_string(c.out_h) + " at " + std::to_string(s.num) + "/" +
                               std::to_string(s.denom) + (c.flip ? " flipped" : "") +
                               (uint8 ? " (bytes)" : " (floats)");
      EXPECT_LE(mean, 1.0) << what << ": max " << worst;
      EXPECT_LE(worst, 8.0) << what << ": mean " << mean;
      RecordProperty(what, std::to_string(mean) + " mean, " + std::to_string(worst) + " max");
    }
  }
  // Every scale libjpeg-turbo offers below 1, and none: a fixture that lost one would test less.
  std::set<std::pair<int, int>> all;
  for (int k = 1; k <= 8; ++k) all.insert({k, 8});
  EXPECT_EQ(scales, all);
}

// Where no DCT scaling applies (the output larger than half the box) the decode is the full image,
// as Pillow's, and the resample is Pillow's: the bytes agree to within the rounding of Pillow's
// fixed-point weights, one grey level.
TEST(Pixels, UnscaledCropsAgreeWithTorchvisionToOneGreyLevel) {
  const std::vector<uint8_t> expected = slurp(kDir + "expected.u8");
  int unscaled = 0;
  for (const PixelCase& c : load_cases()) {
    if (!(decode_scale(c.w, c.h, c.out_w, c.out_h) == ScaleFactor{1, 1})) continue;
    ++unscaled;
    const auto [mean, worst] = errors(loader_pixels(c, true), expected.data() + c.offset);
    EXPECT_LE(worst, 1.0) << c.file << " " << c.w << "x" << c.h << " to " << c.out_w << "x" << c.out_h;
  }
  EXPECT_GE(unscaled, 4);
}

}  // namespace
}  // namespace trainbench

namespace trainbench {
namespace {

// A 33-byte PNG whose header claims 60000 x 60000 (3.6e9 pixels, 10.8 GB of RGB): refused from its header,
// before libpng reads on or anything is allocated, naming the size and the limit; one a little under the
// limit's side passes the size check (and then fails as the truncated file it is).
TEST(Pixels, AHeaderClaimingMorePixelsThanTheLimitIsRefusedBeforeDecoding) {
  auto png_header = [](uint32_t w, uint32_t h) {
    std::vector<uint8_t> b = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R'};
    for (uint32_t v : {w, h}) {
      for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<uint8_t>(v >> s));
    }
    for (uint8_t v : {8, 2, 0, 0, 0, 0, 0, 0, 0}) b.push_back(v);  // 8-bit RGB, CRC not checked here
    return b;
  };
  data::SampleFormat format;
  format.width = format.height = 8;
  std::vector<float> out(8 * 8 * 3);
  data::DecodeTimes times;
  std::string why;
  bool chose = false;
  auto choose = [&](int w, int h) {
    chose = true;
    return data::Crop{data::CropBox{0, 0, double(w), double(h)}, false};
  };
  const std::vector<uint8_t> bomb = png_header(60000, 60000);
  EXPECT_FALSE(data::decode_crop(bomb.data(), bomb.size(), choose, format, out.data(), times, why));
  EXPECT_FALSE(chose) << "no crop is drawn for a refused file";
  EXPECT_NE(why.find("60000x60000"), std::string::npos) << why;
  EXPECT_NE(why.find(std::to_string(data::kMaxImagePixels)), std::string::npos) << why;
  // Pillow's refusal limit: its Image.py has MAX_IMAGE_PIXELS = int(1024 * 1024 * 1024 // 4 // 3), that is
  // 89,478,485, and refuses an image of more than twice that many pixels (DecompressionBombError). A
  // header of exactly 178,956,970 pixels (one row) passes the check; one more pixel is refused.
  for (const auto& [w, refused] : {std::pair<uint32_t, bool>{178956970, false}, {178956971, true}}) {
    const std::vector<uint8_t> row = png_header(w, 1);
    why.clear();
    EXPECT_FALSE(data::decode_crop(row.data(), row.size(), choose, format, out.data(), times, why));
    EXPECT_EQ(why.find("over the limit") != std::string::npos, refused) << w << ": " << why;
  }
  chose = false;
  const std::vector<uint8_t> small = png_header(1000, 1000);
  why.clear();
  EXPECT_FALSE(data::decode_crop(small.data(), small.size(), choose, format, out.data(), times, why));
  EXPECT_TRUE(chose) << "under the limit the header passes; the decode then fails on the missing data";
  EXPECT_EQ(why.find("over the limit"), std::string::npos) << why;
}

}  // namespace
}  // namespace trainbench
