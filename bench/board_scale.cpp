// The board at scale: a store of RUNS runs x CASES cases (default 10,000 x 50, five machines), then
// `board` built from it and printed as Markdown and HTML, timed. Built only on request:
//   cmake --build build --target trainbench_board_bench && build/trainbench_board_bench [STORE] [RUNS] [CASES]
// The store is made once (reused when STORE exists with as many runs); every record is a full one, with
// 20 raw step times, as a run writes it. Prints each phase's time (median of 5) and answers the target:
// the board under 2 seconds on SQLite with its default --last, in this process and as the command
// (`trainbench board`, beside this program, started as a user starts it). Then the step detector's
// false alarms on pure noise, counted over 100,000 series (docs/methodology.md quotes them).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <unistd.h>
#include <string>

#include <fmt/format.h>

#include "board/board.h"
#include "report/html_report.h"
#include "store/store.h"

using namespace trainbench;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

template <class F>
double median_time(int rounds, F&& f) {
  std::vector<double> t;
  for (int i = 0; i < rounds; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(seconds_since(t0));
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// A run of `cases` cases on `machine`, the `index`-th of its history: models of the CNN zoo at a few
// batches, throughputs that wobble by 1% around a level per case.
ResultsFile make_run(int machine, int index, int cases, std::mt19937_64& rng) {
  static const char* models[] = {"resnet50", "resnet18", "mobilenet_v2", "googlenet", "alexnet",
                                 "vgg16",    "densenet121", "inception_v3", "resnet101", "vgg11"};
  std::normal_distribution<double> wobble(0.0, 0.01);
  ResultsFile f;
  Context& c = f.context;
  c.hostname = fmt::format("machine-{}", machine);
  c.device = machine % 2 ? "cuda:0" : "cpu";
  c.device_name = machine % 2 ? "GPU model" : "CPU model";
  c.libtorch_version = index < 5000 ? "2.10.0" : "2.11.0";
  c.trainbench_version = "bench";
  c.git_revision = fmt::format("{:012x}", index);
  c.start_time = fmt::format("2026-{:02}-{:02}T{:02}:{:02}:00Z", 1 + index / 2000, 1 + index / 100 % 20,
                             index / 4 % 24, machine * 10 + index % 4);
  c.cpu_model = "bench";
  c.cpu_cores = 16;
  c.threads = 16;
  for (int k = 0; k < cases; ++k) {
    Record r;
    r.model = models[k % 10];
    r.batch_size = int64_t{8} << (k / 10);
    r.device = c.device;
    r.precision = "fp32";
    r.layout = "nchw";
    r.optimizer = "sgd";
    r.threads = 16;
    r.name = fmt::format("{}:b{}:fp32:nchw:{}", r.model, r.batch_size, r.device);
    r.status = Status::ok;
    r.unit = "images/s";
    const double step = (0.05 + 0.01 * k) * (1.0 + wobble(rng));
    for (int s = 0; s < 20; ++s) r.samples_s.push_back(step * (1.0 + wobble(rng)));
    r.step_time_s = summarize(r.samples_s);
    r.throughput = r.batch_size / r.step_time_s.median;
    r.stop_reason = "converged";
    f.benchmarks.push_back(r);
  }
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "/tmp/trainbench_board_bench.sqlite";
  const int runs = argc > 2 ? std::stoi(argv[2]) : 10000;
  const int cases = argc > 3 ? std::stoi(argv[3]) : 50;
  const int machines = 5;
  auto store = Store::open({StoreSpec::Kind::sqlite, path});
  const auto have = static_cast<int>(store->runs({}).size());
  if (have != runs) {
    store.reset();
    std::filesystem::remove(path);
    std::filesystem::remove(path + "-wal");
    std::filesystem::remove(path + "-shm");
    store = Store::open({StoreSpec::Kind::sqlite, path});
    std::mt19937_64 rng(1);
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < runs; ++i) store->add(make_run(i % machines, i / machines, cases, rng));
    std::printf("made the store: %d runs x %d cases in %.1f s (%s, %.0f MiB)\n", runs, cases, seconds_since(t0),
                path.c_str(), std::filesystem::file_size(path) / 1048576.0);
  } else {
    std::printf("reused the store: %d runs x %d cases (%s)\n", runs, cases, path.c_str());
  }
  const std::string chartjs = read_chartjs();
  for (const int64_t last : {int64_t{20}, int64_t{100}, int64_t{runs}}) {
    Board b;
    const double build = median_time(5, [&] { b = build_board(*store, {"", last, ""}); });
    size_t md_size = 0, html_size = 0;
    const double md = median_time(5, [&] { md_size = board_markdown(b).size(); });
    const double html = median_time(5, [&] { html_size = board_html(b, chartjs).size(); });
    std::printf("--last %-6lld build %.3f s, markdown %.3f s (%zu B), html %.3f s (%zu KiB): %d columns, %zu rows, "
                "%lld series checked; %s the 2 s target\n",
                static_cast<long long>(last), build, md, md_size, html, html_size / 1024, int(b.columns.size()),
                b.rows.size(), static_cast<long long>(b.series), build + html < 2.0 ? "within" : "OVER");
  }
  // The command itself, as a user runs it (process start and LibTorch's libraries loaded included).
  char self[4096] = {};
  const ssize_t len = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  const std::filesystem::path exe = std::filesystem::path(std::string(self, len > 0 ? size_t(len) : 0)).parent_path() / "trainbench";
  if (std::filesystem::exists(exe)) {
    for (const char* format : {"md", "html"}) {
      const std::string cmd = fmt::format("{} board --store {} --format {} -o /tmp/trainbench_board_bench.{} 2> /dev/null",
                                          exe.string(), path, format, format);
      int code = 0;
      const double t = median_time(5, [&] { code = std::system(cmd.c_str()); });
      std::printf("trainbench board --format %-4s (the command, default --last): %.3f s, exit %d; %s the 2 s target\n",
                  format, t, code, t < 2.0 && code == 0 ? "within" : "OVER");
    }
  }

  // False alarms of the step detector on pure noise (2% run-to-run, carried by the records).
  std::mt19937_64 rng(5);
  std::normal_distribution<double> z(0.0, 1.0);
  std::exponential_distribution<double> e(1.0);
  std::bernoulli_distribution sign(0.5);
  const int series = 100000, length = 40;
  long gauss = 0, laplace = 0;
  for (int k = 0; k < series; ++k) {
    std::vector<HistoryPoint> g, l;
    for (int i = 0; i < length; ++i) {
      g.push_back({100.0 * std::exp(0.02 * z(rng)), 0.02});
      l.push_back({100.0 * std::exp((sign(rng) ? 1 : -1) * e(rng) * 0.02 / std::sqrt(2.0)), 0.02});
    }
    gauss += static_cast<long>(detect_changes(g).changes.size());
    laplace += static_cast<long>(detect_changes(l).changes.size());
  }
  const StepRule rule;
  const double candidates = double(series) * (length - rule.min_before - rule.hold + 1);
  std::printf("false alarms on pure noise (sigma 2%%, %d series of %d runs, %.0f candidate runs each): Gaussian %ld "
              "(%.2g per run), Laplace %ld (%.2g per run)\n",
              series, length, candidates, gauss, gauss / candidates, laplace, laplace / candidates);
  return 0;
}
