// `trainbench make-data DIR` (photo-like JPEGs for a trial) and `trainbench data --data DIR` (the image
// loader alone: images/s, MB/s and time per image by stage, for each loader thread count).
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/options.h"
#include "data/data_error.h"
#include "data/image_folder.h"
#include "data/image_source.h"
#include "data/loader_bench.h"
#include "data/make_data.h"
#include "results/number_format.h"
#include "runner/plan.h"
#include "workloads/training.h"

namespace trainbench::cli {

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

int cmd_data(const DataOptions& o) {
  const std::vector<int> threads = loader_thread_list(o.loader_threads, false);
  if (o.batch < 1) throw InputError("data: --batch must be at least 1");
  if (o.size < 8 || o.size > 4096) throw InputError(fmt::format("data: --size {} is not between 8 and 4096", o.size));
  if (o.epochs < 1 || o.epochs > 1000) throw InputError(fmt::format("data: --epochs {} is not between 1 and 1000", o.epochs));
  if (o.layout != "nchw" && o.layout != "nhwc") throw InputError("data: --layout must be nchw or nhwc");
  if (o.precision != "fp32" && o.precision != "bf16" && o.precision != "fp16") {
    throw InputError("data: --precision must be fp32, bf16 or fp16 (the batch's dtype)");
  }
  data::ImageFolder folder;
  try {
    folder = data::scan_image_folder(o.data);
  } catch (const DataError& e) {
    throw InputError(e.what());
  }
  data::ImageSourceOptions so;
  so.batch = o.batch;
  so.width = so.height = o.size;
  so.channels_last = o.layout == "nhwc";
  so.dtype = detail::precision_dtype(o.precision);
  const int64_t files = static_cast<int64_t>(folder.files.size());
  std::cout << fmt::format("loader: {} ({} JPEGs, {} classes), batch {}, crop {}x{} {} {}, {} epoch(s) per thread count\n",
                           o.data, files, folder.classes.size(), o.batch, o.size, o.size, o.layout, o.precision,
                           o.epochs);
  std::cout << fmt::format("{:>7}  {:>5}  {:>10}  {:>7}  {:>7}  {:>9}  {:>10}  {:>7}  {:>7}\n", "threads", "epoch",
                           "images/s", "MB/s", "scaling", "read ms", "decode ms", "aug ms", "copy ms");
  double first = 0.0;
  int64_t skipped = 0;
  std::string first_skipped;
  for (int t : threads) {
    const data::LoaderRun run = data::measure_loader(
        [&] { return std::make_shared<data::ImageFolderSource>(folder, so); }, t, files, o.batch, o.epochs);
    for (size_t e = 0; e < run.epochs.size(); ++e) {
      const auto& f = run.epochs[e];
      if (first == 0.0 && e + 1 == run.epochs.size()) first = f.samples_s;
      const bool last = e + 1 == run.epochs.size();
      // Stage times: thread time per image over the whole run (not per epoch), on the last epoch's row.
      std::cout << fmt::format("{:>7}  {:>5}  {:>10}  {:>7}  {:>7}  {:>9}  {:>10}  {:>7}  {:>7}\n", t, e + 1,
                               format_significant(f.samples_s), format_significant(f.mb_s),
                               last && first > 0.0 ? format_significant(f.samples_s / first) + "x" : "",
                               last ? format_significant(1e3 * run.read_s) : "",
                               last ? format_significant(1e3 * run.decode_s) : "",
                               last ? format_significant(1e3 * run.augment_s) : "",
                               last ? format_significant(1e3 * run.copy_s) : "");
    }
    skipped = std::max(skipped, run.stats.skipped_files);
    if (first_skipped.empty()) first_skipped = run.stats.first_skipped;
  }
  std::cout << "images/s and MB/s: images delivered per second of wall time; scaling: the last epoch against the "
               "first thread count's; stage ms: thread time per image (read, decode, crop+resize+flip+normalize, "
               "dtype copy)\n";
  if (o.epochs > 1) std::cout << "epoch 1 may read files the page cache does not hold yet; later epochs read from it\n";
  if (skipped > 0) std::cout << fmt::format("{} file(s) skipped (not decodable), first {}\n", skipped, first_skipped);
  return kExitOk;
}

}  // namespace trainbench::cli
