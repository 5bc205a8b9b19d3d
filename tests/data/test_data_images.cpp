// The JPEG image pipeline: ImageFolder discovery, DCT scale choice, the crop/flip/normalize math, and
// the loader over a folder (shuffled epochs, corrupt files, more batches than the prefetch queue holds).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

#include "cli_util.h"
#include "data/augment.h"
#include "data/data_error.h"
#include "data/image_folder.h"
#include "data/image_source.h"
#include "data/jpeg.h"
#include "data/loader.h"
#include "data_util.h"

namespace trainbench {
namespace {

namespace fs = std::filesystem;
using namespace data;

TEST(ImageFolderScan, ClassesSortedLabelsByClassJpegAndPngOfAnyCase) {
  const fs::path d = test::temp_dir("data", "scan");
  test::write_jpeg(d / "zebra" / "z1.jpg", 8, 8, 1);
  test::write_jpeg(d / "ant" / "b.JPEG", 8, 8, 2);
  test::write_jpeg(d / "ant" / "a.Jpg", 8, 8, 3);
  test::write_jpeg(d / "ant" / "deep" / "c.jpeg", 8, 8, 4);  // found recursively, as torchvision's
  test::write_jpeg(d / "Bee" / "x.jpg", 8, 8, 5);
  test::write_bytes(d / "ant" / "notes.txt", {'h', 'i'});
  test::write_bytes(d / "ant" / "pic.png", {0x89, 'P', 'N', 'G'});  // listed by name; decoding is the loader's
  test::write_jpeg(d / "loose.jpg", 8, 8, 6);                       // a file at the root is no class: ignored
  const ImageFolder f = scan_image_folder(d.string());
  // Byte order, as Python's sorted(): upper case before lower case.
  EXPECT_EQ(f.classes, (std::vector<std::string>{"Bee", "ant", "zebra"}));
  ASSERT_EQ(f.files.size(), 6u);
  EXPECT_EQ(fs::path(f.files[0]).filename().string(), "x.jpg");
  EXPECT_EQ(fs::path(f.files[1]).filename().string(), "a.Jpg");
  EXPECT_EQ(fs::path(f.files[2]).filename().string(), "b.JPEG");
  EXPECT_EQ(fs::path(f.files[3]).filename().string(), "c.jpeg");
  EXPECT_EQ(fs::path(f.files[4]).filename().string(), "pic.png");
  EXPECT_EQ(fs::path(f.files[5]).filename().string(), "z1.jpg");
  EXPECT_EQ(f.labels, (std::vector<int64_t>{0, 1, 1, 1, 1, 2}));
  fs::remove_all(d);
}

TEST(ImageFolderScan, MissingEmptyOrClasslessFolderIsRefusedNamingThePath) {
  const fs::path d = test::temp_dir("data", "empty");
  auto message = [](const std::string& p) {
    try {
      scan_image_folder(p);
    } catch (const DataError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message((d / "nope").string()).find((d / "nope").string() + ": no such"), std::string::npos);
  EXPECT_NE(message(d.string()).find("no class folders"), std::string::npos);
  fs::create_directories(d / "cls");
  test::write_bytes(d / "cls" / "a.txt", {'x'});
  EXPECT_NE(message(d.string()).find((d / "cls").string() + ": a class folder with no .jpg"), std::string::npos)
      << message(d.string());
  // An empty class beside good ones is refused too, as torchvision's ImageFolder refuses it.
  test::write_jpeg(d / "good" / "a.jpg", 8, 8, 1);
  EXPECT_NE(message(d.string()).find("cls: a class folder with no"), std::string::npos) << message(d.string());
  fs::remove_all(d);
}

// A directory link back up the tree (a loop) is not followed: the scan ends, with the files once.
TEST(ImageFolderScan, ALinkToAFolderAboveIsNotFollowed) {
  const fs::path d = test::temp_dir("data", "loop");
  test::write_jpeg(d / "cls" / "a.jpg", 8, 8, 1);
  fs::create_directory_symlink(d / "cls", d / "cls" / "again");  // cls/again -> cls
  fs::create_directory_symlink(d, d / "cls" / "root");           // cls/root -> the root
  const ImageFolder f = scan_image_folder(d.string());
  ASSERT_EQ(f.files.size(), 1u);
  EXPECT_EQ(fs::path(f.files[0]).filename(), "a.jpg");
  fs::remove_all(d);
}

TEST(JpegScale, SmallestFactorThatStillCoversTheCrop) {
  // libjpeg-turbo scales by M/8. A 1000x800 region for a 224 crop: 2/8 gives 250x200 (200 < 224),
  // 3/8 gives 375x300: the smallest that covers it.
  EXPECT_EQ(choose_scale(1000, 800, 224, 224), (ScaleFactor{3, 8}));
  // 2000x2000: 1/8 gives 250x250 >= 224.
  EXPECT_EQ(choose_scale(2000, 2000, 224, 224), (ScaleFactor{1, 8}));
  // 300x230: 7/8 gives 262x201 < 224: no scaling, the region is not large enough.
  EXPECT_EQ(choose_scale(300, 230, 224, 224), (ScaleFactor{1, 1}));
  // Smaller than the crop: decoded at full size (and then upsampled by the resize).
  EXPECT_EQ(choose_scale(100, 80, 224, 224), (ScaleFactor{1, 1}));
  // Exactly twice: 1/2 gives 224x224.
  EXPECT_EQ(choose_scale(448, 448, 224, 224), (ScaleFactor{1, 2}));
}

TEST(JpegDecode, ScaledDecodeHasTheScaledSizeAndTheSameColours) {
  const auto px = test::gradient_rgb(64, 48, 200);
  const auto jpeg = encode_jpeg(px.data(), 64, 48, 95);
  JpegDecoder dec;
  RgbImage full, half;
  ASSERT_TRUE(dec.decode(jpeg.data(), jpeg.size(), {1, 1}, full));
  ASSERT_TRUE(dec.decode(jpeg.data(), jpeg.size(), {1, 2}, half));
  EXPECT_EQ(full.width, 64);
  EXPECT_EQ(full.height, 48);
  EXPECT_EQ(half.width, 32);
  EXPECT_EQ(half.height, 24);
  // The constant blue channel survives both (JPEG is lossy: within a few levels).
  EXPECT_NEAR(full.pixels[2], 200, 4);
  EXPECT_NEAR(half.pixels[(10 * 32 + 10) * 3 + 2], 200, 4);
  // Not a JPEG, and a truncated one, fail with a message instead of crashing.
  const std::vector<uint8_t> text = {'n', 'o', 't', ' ', 'j', 'p', 'g'};
  EXPECT_FALSE(dec.decode(text.data(), text.size(), {1, 1}, full));
  EXPECT_FALSE(dec.error().empty());
  EXPECT_FALSE(dec.decode(jpeg.data(), jpeg.size() / 2, {1, 1}, full));
  // The same decoder still decodes a good file after those failures.
  EXPECT_TRUE(dec.decode(jpeg.data(), jpeg.size(), {1, 1}, full)) << dec.error();
}

TEST(Augment, AntialiasedCropFlipNormalizeMatchesAHandComputedPixel) {
  // A 4x2 image; red values by pixel: row 0: 10 20 30 40, row 1: 50 60 70 80; green 0; blue 255.
  std::vector<uint8_t> rgb(4 * 2 * 3, 0);
  const int red[8] = {10, 20, 30, 40, 50, 60, 70, 80};
  for (int i = 0; i < 8; ++i) {
    rgb[i * 3] = static_cast<uint8_t>(red[i]);
    rgb[i * 3 + 2] = 255;
  }
  // The whole image to 2x1, by Pillow's bilinear resize: shrinking by 2 stretches the triangle filter
  // to a radius of 2. Output x=0 is centred at source x = 1.0: pixels 0, 1, 2 (centres 0.5, 1.5, 2.5)
  // weigh 1 - |d| / 2 = 0.75, 0.75, 0.25, normalised 3/7, 3/7, 1/7. Row 0: (3*10 + 3*20 + 30) / 7 =
  // 17.14, rounded to 17 (Pillow's horizontal pass gives bytes); row 1: 400 / 7 = 57.14 -> 57. The
  // vertical pass (centre 1.0, rows 0 and 1 at 0.75 each) averages them: 37. Output x=1, centred at 3.0:
  // pixels 1, 2, 3 at 1/7, 3/7, 3/7: row 0 230 / 7 -> 33, row 1 510 / 7 -> 73; 53.
  const CropBox all{0, 0, 4, 2};
  auto norm = [](double v, int c) { return (v / 255.0 - kImagenetMean[c]) / kImagenetStd[c]; };
  std::vector<float> out(2 * 1 * 3);
  crop_resize_normalize(rgb.data(), 4, 2, all, 2, 1, false, false, out.data());
  // Planar: red plane [x0, x1], green plane, blue plane.
  EXPECT_NEAR(out[0], norm(37, 0), 1e-5);
  EXPECT_NEAR(out[1], norm(53, 0), 1e-5);
  EXPECT_NEAR(out[2], norm(0, 1), 1e-5);
  EXPECT_NEAR(out[5], norm(255, 2), 1e-5);
  // Flipped: the columns trade places.
  crop_resize_normalize(rgb.data(), 4, 2, all, 2, 1, true, false, out.data());
  EXPECT_NEAR(out[0], norm(53, 0), 1e-5);
  EXPECT_NEAR(out[1], norm(37, 0), 1e-5);
  // Channels-last: pixel by pixel, (r, g, b) each.
  crop_resize_normalize(rgb.data(), 4, 2, all, 2, 1, false, true, out.data());
  EXPECT_NEAR(out[0], norm(37, 0), 1e-5);
  EXPECT_NEAR(out[2], norm(255, 2), 1e-5);
  EXPECT_NEAR(out[3], norm(53, 0), 1e-5);
  // A crop of the right half, at its own size (2x2 -> 2x2): the pixels themselves, no blending.
  std::vector<float> same(2 * 2 * 3);
  crop_resize_normalize(rgb.data(), 4, 2, CropBox{2, 0, 2, 2}, 2, 2, false, false, same.data());
  EXPECT_NEAR(same[0], norm(30, 0), 1e-5);
  EXPECT_NEAR(same[3], norm(80, 0), 1e-5);
}

TEST(Augment, AnEnlargedCropBlendsOnlyItsOwnPixels) {
  // A 4x1 image, red 0 100 200 250; the crop is pixels 1 and 2, enlarged to 4 wide (Pillow's resize of
  // the cropped image). Outputs are centred at 1.25, 1.75, 2.25, 2.75; the filter is plain bilinear
  // (radius 1) over the crop's pixels only (centres 1.5 and 2.5): the edges take their pixel alone,
  // 100 and 200, not a blend with 0 or 250 outside the crop; the middle ones 0.75/0.25: 125 and 175.
  std::vector<uint8_t> rgb(4 * 3, 0);
  const int red[4] = {0, 100, 200, 250};
  for (int i = 0; i < 4; ++i) rgb[i * 3] = static_cast<uint8_t>(red[i]);
  std::vector<uint8_t> out(4 * 3);
  crop_resize_bytes(rgb.data(), 4, 1, CropBox{1, 0, 2, 1}, 4, 1, false, true, out.data());
  EXPECT_EQ(out[0], 100);
  EXPECT_EQ(out[3], 125);
  EXPECT_EQ(out[6], 175);
  EXPECT_EQ(out[9], 200);
}

TEST(Augment, RandomResizedCropStaysInsideWithinScaleAndRatio) {
  std::mt19937_64 rng(7);
  int fallbacks = 0;
  for (int i = 0; i < 2000; ++i) {
    const CropBox b = random_resized_crop(400, 350, rng);
    ASSERT_GE(b.x, 0);
    ASSERT_GE(b.y, 0);
    ASSERT_LE(b.x + b.w, 400);
    ASSERT_LE(b.y + b.h, 350);
    const double area = b.w * b.h / (400.0 * 350.0);
    const double ratio = b.w / b.h;
    // Rounding w and h to whole pixels moves area and ratio by at most ~1% at these sizes.
    EXPECT_GE(area, 0.08 * 0.97);
    EXPECT_LE(area, 1.0);
    EXPECT_GE(ratio, 0.75 * 0.97);
    EXPECT_LE(ratio, 4.0 / 3.0 * 1.03);
    if (b.w == 400 && b.h == 350) ++fallbacks;
  }
  // A 400x350 image fits most draws: the central fallback is rare (the exact rate depends on the draws).
  EXPECT_LT(fallbacks, 200);
}

// A folder of `n` 40x30 JPEGs in `classes` classes.
ImageFolder make_folder(const fs::path& d, int n, int classes) {
  for (int i = 0; i < n; ++i) {
    test::write_jpeg(d / ("c" + std::to_string(i % classes)) / ("img" + std::to_string(i) + ".jpg"), 40, 30,
                     i * 7 % 256);
  }
  return scan_image_folder(d.string());
}

ImageSourceOptions small_options(int64_t batch) {
  ImageSourceOptions o;
  o.batch = batch;
  o.width = 16;
  o.height = 12;
  o.seed = 3;
  return o;
}

TEST(ImageLoader, EpochsAreShuffledPermutationsBeyondThePrefetchQueue) {
  const fs::path d = test::temp_dir("data", "epochs");
  const ImageFolder f = make_folder(d, 30, 3);
  auto source = std::make_shared<ImageFolderSource>(f, small_options(4));
  // 2 threads and a queue of 2 batches: 15 batches (60 images, two epochs) must stream through it.
  Loader loader(source, 2, 2);
  std::map<int64_t, Batch> by_index;
  for (int i = 0; i < 15; ++i) {
    Batch b = loader.next();
    ASSERT_EQ(b.index, i);  // handed over in the order asked for, whichever thread finished first
    ASSERT_EQ(b.tensors[0].sizes().vec(), (std::vector<int64_t>{4, 3, 12, 16}));
    for (int c = 0; c < 3; ++c) {
      // A resized pixel is a bilinear blend (weights >= 0, summing to 1) of decoded levels in [0, 255],
      // normalized with ImageNet's mean and std: within [(0 - mean) / std, (1 - mean) / std].
      const torch::Tensor channel = b.tensors[0].select(1, c);
      EXPECT_GE(channel.min().item<double>(), (0.0 - kImagenetMean[c]) / kImagenetStd[c] - 1e-5) << "channel " << c;
      EXPECT_LE(channel.max().item<double>(), (1.0 - kImagenetMean[c]) / kImagenetStd[c] + 1e-5) << "channel " << c;
    }
    for (size_t k = 0; k < b.items.size(); ++k) {
      EXPECT_EQ(b.tensors[1][k].item<int64_t>(), f.labels[b.items[k]]);  // the label travels with its image
      // ... and so does the image: make_folder's img<i>.jpg has the constant blue level i * 7 % 256, which
      // crop, resize and flip keep. JPEG's 4:2:0 chroma rounding beside the red and green gradients moves
      // single pixels by up to 8 levels, a crop's mean by under 2.5 (libjpeg through PIL at quality 90 on
      // these images, decoded whole and DCT-scaled): the mean blue level is within 4 of the file's, and
      // the next image's (7 levels off) is not.
      const std::string file = fs::path(f.files[b.items[k]]).stem().string();  // img<i>
      const int shade = std::stoi(file.substr(3)) * 7 % 256;
      const double blue = b.tensors[0][k][2].mean().item<double>() * kImagenetStd[2] + kImagenetMean[2];
      EXPECT_NEAR(255.0 * blue, shade, 4.0) << f.files[b.items[k]];
    }
    by_index.emplace(b.index, std::move(b));
  }
  ASSERT_EQ(by_index.size(), 15u);
  std::vector<int64_t> order;  // file by position, positions 0..59
  for (const auto& [i, b] : by_index) order.insert(order.end(), b.items.begin(), b.items.end());
  std::vector<int64_t> e0(order.begin(), order.begin() + 30), e1(order.begin() + 30, order.begin() + 60);
  EXPECT_NE(e0, e1);  // each epoch its own shuffle
  std::vector<int64_t> all(30);
  std::iota(all.begin(), all.end(), 0);
  EXPECT_NE(e0, all);
  std::sort(e0.begin(), e0.end());
  std::sort(e1.begin(), e1.end());
  EXPECT_EQ(e0, all);  // every file once per epoch
  EXPECT_EQ(e1, all);
  const LoaderStats s = loader.stats();
  EXPECT_GE(s.samples, 60);
  EXPECT_GT(s.bytes, 0);
  EXPECT_EQ(s.skipped_files, 0);
  fs::remove_all(d);
}

TEST(ImageLoader, CorruptFilesAreSkippedAndCounted) {
  const fs::path d = test::temp_dir("data", "corrupt");
  make_folder(d, 6, 2);
  const auto good = test::gradient_rgb(40, 30, 9);
  auto jpeg = encode_jpeg(good.data(), 40, 30, 90);
  jpeg.resize(jpeg.size() / 3);
  test::write_bytes(d / "c0" / "truncated.jpg", jpeg);
  test::write_bytes(d / "c1" / "text.jpg", {'h', 'e', 'l', 'l', 'o'});
  test::write_bytes(d / "c1" / "empty.JPEG", {});
  const ImageFolder f = scan_image_folder(d.string());
  ASSERT_EQ(f.files.size(), 9u);
  std::set<std::string> bad = {(d / "c0" / "truncated.jpg").string(), (d / "c1" / "text.jpg").string(),
                               (d / "c1" / "empty.JPEG").string()};
  auto source = std::make_shared<ImageFolderSource>(f, small_options(3));
  Loader loader(source, 1, 2);
  for (int i = 0; i < 8; ++i) {  // 24 images: every file met at least twice
    const Batch b = loader.next();
    ASSERT_EQ(b.items.size(), 3u);
    for (int64_t item : b.items) EXPECT_EQ(bad.count(f.files[item]), 0u) << f.files[item];
  }
  const LoaderStats s = loader.stats();
  EXPECT_EQ(s.skipped_files, 3);
  EXPECT_EQ(bad.count(s.first_skipped), 1u) << s.first_skipped;
  fs::remove_all(d);
}

// One file that decodes among many that do not: every sample is that file, in every epoch, whichever
// position the batch starts at (the tries wrap within the epoch's order, so none is missed by running
// on into the next epoch's shuffle).
TEST(ImageLoader, OneGoodFileAmongBadOnesFeedsEverySample) {
  for (int bad_files : {3, 5, 8}) {
    const fs::path d = test::temp_dir("data", "onegood" + std::to_string(bad_files));
    test::write_jpeg(d / "c0" / "good.jpg", 40, 30, 7);
    for (int i = 0; i < bad_files; ++i) test::write_bytes(d / "c1" / ("bad" + std::to_string(i) + ".jpg"), {'x'});
    const ImageFolder f = scan_image_folder(d.string());
    auto source = std::make_shared<ImageFolderSource>(f, small_options(3));
    Loader loader(source, 1, 2);
    for (int i = 0; i < 2 * (bad_files + 1); ++i) {  // two epochs and more, batches straddling them
      const Batch b = loader.next();
      for (int64_t item : b.items) EXPECT_EQ(fs::path(f.files[item]).filename(), "good.jpg") << bad_files;
    }
    EXPECT_EQ(loader.stats().skipped_files, bad_files);
    fs::remove_all(d);
  }
}

TEST(ImageLoader, ChannelsLastAndBf16BatchesArriveInTheCaseFormat) {
  const fs::path d = test::temp_dir("data", "format");
  const ImageFolder f = make_folder(d, 4, 2);
  ImageSourceOptions o = small_options(2);
  o.channels_last = true;
  o.dtype = at::kBFloat16;
  Loader loader(std::make_shared<ImageFolderSource>(f, o), 1);
  const Batch b = loader.next();
  EXPECT_EQ(b.tensors[0].scalar_type(), at::kBFloat16);
  EXPECT_EQ(b.tensors[0].sizes().vec(), (std::vector<int64_t>{2, 3, 12, 16}));
  EXPECT_TRUE(b.tensors[0].is_contiguous(at::MemoryFormat::ChannelsLast));
  fs::remove_all(d);
}

TEST(ImageLoader, AFolderWhereNothingDecodesIsAnErrorNotAHang) {
  const fs::path d = test::temp_dir("data", "allbad");
  test::write_bytes(d / "c" / "a.jpg", {'x'});
  test::write_bytes(d / "c" / "b.jpg", {'y'});
  Loader loader(std::make_shared<ImageFolderSource>(scan_image_folder(d.string()), small_options(2)), 2);
  EXPECT_THROW(loader.next(), std::runtime_error);
  fs::remove_all(d);
}

}  // namespace
}  // namespace trainbench
