// `trainbench make-data DIR` (photo-like JPEGs for a trial) and `trainbench data --data DIR|FILE` (the
// loader alone: images/s, MB/s and time per image by stage, or windows/s, tokens/s and MB/s for a token
// file, for each loader thread count).
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/shared_flags.h"
#include "cli/options.h"
#include "data/data_error.h"
#include "data/image_folder.h"
#include "data/image_source.h"
#include "data/loader_bench.h"
#include "data/make_data.h"
#include "data/token_source.h"
#include "results/number_format.h"
#include "core/value_rules.h"
#include "workloads/training.h"

namespace trainbench::cli {

// `trainbench data`: the loader alone, on an image folder or a token file. Empty / 0: not given (each
// kind refuses the other kind's settings, and fills in its defaults).
struct DataOptions {
  std::string data;
  int64_t batch = 64;
  std::string loader_threads = "1,2";
  int epochs = 2;
  int size = 0;                  // images: the crop (224)
  std::string layout;            // images: nchw | nhwc (nchw)
  std::string precision;         // images: fp32 | bf16 | fp16 (fp32)
  std::string transfer;          // images: float | uint8 (float)
  int64_t seq = 0;               // tokens: window length (1024, GPT-2's context)
  int64_t max_image_pixels = 0;  // images: the pixel limit (0: data::kMaxImagePixels)
  std::string data_dtype;        // tokens: uint16 | uint32 (uint16)
};

// `trainbench make-data`: photo-like JPEGs in ImageFolder layout.
struct MakeDataOptions {
  std::string dir;
  int64_t images = 0;
  int classes = 10;
  uint64_t seed = 0;
};

std::vector<int> loader_thread_list(const std::string& text, bool zero_ok) {
  std::vector<int> out;
  for (const auto& t : split_list(text, "loader threads")) {
    const int n = static_cast<int>(checked_number(t, kThreadCount, "--loader-threads"));
    if (n == 0 && !zero_ok) throw InputError("--loader-threads: 0 is not a thread count here (give 1 or more)");
    out.push_back(n);
  }
  return out;
}

int cmd_make_data(const MakeDataOptions& o) {
  if (o.images < 1) throw InputError("make-data: --images must be at least 1");
  if (o.classes < 1 || o.classes > o.images) {
    throw InputError(fmt::format("make-data: --classes {} must be between 1 and --images {}", o.classes, o.images));
  }
  data::MadeData made;
  try {
    made = data::make_dataset(o.dir, o.images, o.classes, o.seed);
  } catch (const DataError& e) {
    throw InputError(e.what());
  }
  std::cerr << fmt::format("make-data: {} JPEGs in {} class folders under {}, {} (mean {} a file)\n", made.files,
                           o.classes, o.dir, format_bytes(made.bytes), format_bytes(made.bytes / made.files));
  return kExitOk;
}

namespace {

// One table for both kinds: per thread count and epoch, samples/s (and tokens/s for windows), MB/s,
// the scaling against the first thread count, and on the last epoch's row the thread time per sample
// by stage. Returns the stats of the run that skipped the most files.
LoaderStats print_runs(const std::vector<int>& threads, int64_t per_epoch, const DataOptions& o,
                                           const std::function<std::shared_ptr<data::BatchSource>()>& make_source,
                                           int64_t tokens_per_sample) {
  const bool tokens = tokens_per_sample > 0;
  if (tokens) {
    std::cout << fmt::format("{:>7}  {:>5}  {:>10}  {:>10}  {:>7}  {:>7}  {:>9}\n", "threads", "epoch", "windows/s",
                             "tokens/s", "MB/s", "scaling", "cut ms");
  } else {
    std::cout << fmt::format("{:>7}  {:>5}  {:>10}  {:>7}  {:>7}  {:>9}  {:>10}  {:>7}  {:>7}\n", "threads", "epoch",
                             "images/s", "MB/s", "scaling", "read ms", "decode ms", "aug ms", "copy ms");
  }
  double first = 0.0;
  LoaderStats most_skipped;
  for (int t : threads) {
    // Each epoch's row is printed as the epoch ends: a row measured is a row shown, whatever ends the
    // process later (a file truncated under the reader). The last row waits for the run's stage times.
    const auto row = [&](size_t e, const data::EpochFigures& f, const data::LoaderRun* run) {
      const bool last = run != nullptr;
      if (first == 0.0 && last) first = f.samples_s;
      const std::string scaling = last && first > 0.0 ? format_significant(f.samples_s / first) + "x" : "";
      auto stage = [&](double data::LoaderRun::*s) { return last ? format_significant(1e3 * (run->*s)) : std::string(); };
      if (tokens) {
        std::cout << fmt::format("{:>7}  {:>5}  {:>10}  {:>10}  {:>7}  {:>7}  {:>9}\n", t, e + 1,
                                 format_significant(f.samples_s),
                                 format_significant(f.samples_s * static_cast<double>(tokens_per_sample)),
                                 format_significant(f.mb_s), scaling, stage(&data::LoaderRun::augment_s));
      } else {
        // Stage times: thread time per image over the whole run (not per epoch), on the last epoch's row.
        std::cout << fmt::format("{:>7}  {:>5}  {:>10}  {:>7}  {:>7}  {:>9}  {:>10}  {:>7}  {:>7}\n", t, e + 1,
                                 format_significant(f.samples_s), format_significant(f.mb_s), scaling,
                                 stage(&data::LoaderRun::read_s), stage(&data::LoaderRun::decode_s),
                                 stage(&data::LoaderRun::augment_s), stage(&data::LoaderRun::copy_s));
      }
      std::cout << std::flush;
    };
    const data::LoaderRun run =
        data::measure_loader(make_source, t, per_epoch, o.batch, o.epochs, [&](size_t e, const data::EpochFigures& f) {
          if (static_cast<int>(e) + 1 < o.epochs) row(e, f, nullptr);
        });
    row(run.epochs.size() - 1, run.epochs.back(), &run);
    if (run.stats.skipped_files > most_skipped.skipped_files) most_skipped = run.stats;
  }
  return most_skipped;
}

int data_images(const DataOptions& o, const std::vector<int>& threads) {
  if (o.seq != 0 || !o.data_dtype.empty())
    throw InputError("data: --seq and --data-dtype are for token files; " + o.data + " is a folder");
  if (o.max_image_pixels > 0) data::set_max_image_pixels(o.max_image_pixels);
  const int size = o.size == 0 ? 224 : o.size;
  const std::string transfer = o.transfer.empty() ? "float" : o.transfer;
  if (size < 8 || size > 4096) throw InputError(fmt::format("data: --size {} is not between 8 and 4096", size));
  Layout layout = Layout::nchw;
  Precision precision;
  try {
    if (!o.layout.empty()) layout = parse_layout(o.layout);
    if (!o.precision.empty()) precision = parse_precision(o.precision);
  } catch (const std::invalid_argument& e) {
    throw InputError(std::string("data: ") + e.what());
  }
  // The batch's dtype: a pure precision's and an autocast one's alike.
  if (transfer != "float" && transfer != "uint8") throw InputError("data: --data-transfer must be float or uint8");
  if (transfer == "uint8" && precision.type != "fp32") {
    throw InputError("data: --data-transfer uint8 sends bytes: --precision does not apply (the device converts)");
  }
  data::ImageFolder folder;
  try {
    folder = data::scan_image_folder(o.data);
  } catch (const DataError& e) {
    throw InputError(e.what());
  }
  data::ImageSourceOptions so;
  so.batch = o.batch;
  so.width = so.height = size;
  so.channels_last = layout == Layout::nhwc;
  so.dtype = torch_dtype(precision);
  so.uint8 = transfer == "uint8";
  const int64_t files = static_cast<int64_t>(folder.files.size());
  std::cout << fmt::format(
      "loader: {} ({} images, {} classes), batch {}, crop {}x{} {} {}, {} epoch(s) per thread count\n", o.data, files,
      folder.classes.size(), o.batch, size, size, to_string(layout), transfer == "uint8" ? "uint8" : precision.str(), o.epochs);
  const LoaderStats skipped = print_runs(
      threads, files, o, [&] { return std::make_shared<data::ImageFolderSource>(folder, so); }, 0);
  std::cout << "images/s and MB/s: images delivered per second of wall time; scaling: the last epoch against the "
               "first thread count's; stage ms: thread time per image (read, decode, crop+resize+flip+normalize, "
               "dtype copy)\n";
  if (o.epochs > 1) std::cout << "epoch 1 may read files the page cache does not hold yet; later epochs read from it\n";
  if (skipped.skipped_files > 0) {
    std::cout << fmt::format("{} file(s) skipped, first {} ({}); the pixel limit: {} (--max-image-pixels)\n",
                             skipped.skipped_files, skipped.first_skipped, skipped.first_skipped_reason,
                             skipped.max_image_pixels);
  }
  return kExitOk;
}

// A token file: windows of --seq + 1 tokens (a decoder's next-token windows, as `run --model gpt` cuts
// them) at random offsets; an epoch is as many windows as the file holds tokens / seq.
int data_tokens(const DataOptions& o, const std::vector<int>& threads) {
  if (o.size != 0 || !o.layout.empty() || !o.precision.empty() || !o.transfer.empty() || o.max_image_pixels != 0) {
    throw InputError("data: --size, --layout, --precision, --data-transfer and --max-image-pixels are for image "
                     "folders; " + o.data + " is a token file");
  }
  const int64_t seq = o.seq == 0 ? 1024 : o.seq;
  if (seq < 1 || seq > 1'000'000) throw InputError(fmt::format("data: --seq {} is not between 1 and 1000000", seq));
  const std::string dtype = o.data_dtype.empty() ? "uint16" : o.data_dtype;
  std::shared_ptr<data::TokenFile> file;
  data::TokenSourceOptions so;
  so.batch = o.batch;
  so.seq = seq;
  so.target = data::TokenTarget::next_token;
  try {
    file = std::make_shared<data::TokenFile>(o.data, dtype);
    (void)data::TokenWindowSource(file, so);  // refuses a file shorter than one window
  } catch (const DataError& e) {
    throw InputError(e.what());
  }
  const int64_t per_epoch = std::max<int64_t>(o.batch, file->size() / seq);
  std::cout << fmt::format(
      "loader: {} ({} tokens of {}), batch {}, windows of {} + 1 tokens, {} windows an epoch, "
      "{} epoch(s) per thread count\n",
      o.data, file->size(), dtype, o.batch, seq, per_epoch, o.epochs);
  print_runs(
      threads, per_epoch, o, [&] { return std::make_shared<data::TokenWindowSource>(file, so); }, seq);
  std::cout << "windows/s, tokens/s (windows x seq) and MB/s (the window's bytes, seq + 1 ids): per second of wall "
               "time; scaling: the last epoch against the first thread count's; cut ms: thread time per window\n";
  if (o.epochs > 1)
    std::cout << "epoch 1 may read pages the page cache does not hold yet; later epochs mostly read from it\n";
  return kExitOk;
}

}  // namespace

int cmd_data(const DataOptions& o) {
  const std::vector<int> threads = loader_thread_list(o.loader_threads, false);
  if (o.batch < 1) throw InputError("data: --batch must be at least 1");
  if (o.epochs < 1 || o.epochs > 1000)
    throw InputError(fmt::format("data: --epochs {} is not between 1 and 1000", o.epochs));
  // A regular file is a token file; anything else is taken as an image folder (which names what is wrong).
  std::error_code ec;
  if (std::filesystem::is_regular_file(o.data, ec)) return data_tokens(o, threads);
  return data_images(o, threads);
}

Command add_data(CLI::App& app) {
  auto o = std::make_shared<DataOptions>();
  CLI::App* sub = app.add_subcommand(
      "data", "Measure the loader alone: images/s (or windows/s and tokens/s) and MB/s per loader thread count");
  add_data(*sub, o->data, "A folder of JPEGs/PNGs in ImageFolder layout (ROOT/CLASS/IMAGE.jpg), or a token file")
      ->required();
  add_batch(*sub, o->batch, "Batch size")->check(rule(kBatchSize));
  add_loader_threads(*sub, o->loader_threads, "Thread counts, comma-separated");
  sub->add_option("--epochs", o->epochs, "Epochs per thread count, each timed on its own");
  sub->add_option("--size", o->size, "Images: crop size (RandomResizedCrop output, square; default 224)");
  add_layout(*sub, o->layout, Many::one, "Images");
  add_precision(*sub, o->precision, Many::one, PrecisionSet::compute_types, "Images: the batch's dtype");
  add_data_transfer(*sub, o->transfer, "Images");
  sub->add_option("--seq", o->seq, "Tokens: window length (default 1024)");
  add_data_dtype(*sub, o->data_dtype, "Tokens");
  add_max_image_pixels(*sub, o->max_image_pixels, "Images");
  return {sub, [o] { return cmd_data(*o); }};
}

Command add_make_data(CLI::App& app) {
  auto o = std::make_shared<MakeDataOptions>();
  CLI::App* sub = app.add_subcommand("make-data", "Write photo-like JPEGs in ImageFolder layout, to try --data");
  sub->add_option("dir", o->dir, "The folder to create (must not exist, or be empty)")->required();
  // A hundred million files is beyond any folder a benchmark needs (ImageNet has 1.28 million).
  constexpr NumberRule kImageCount{1.0, 1e8, false, true};
  sub->add_option("--images", o->images, "How many JPEGs")->required()->check(rule(kImageCount));
  sub->add_option("--classes", o->classes, "Class folders (default 10)")->check(rule(kImageCount));
  sub->add_option("--seed", o->seed, "Random seed (the same seed writes the same files)");
  return {sub, [o] { return cmd_make_data(*o); }};
}

}  // namespace trainbench::cli
