// What `trainbench run` shows as its sweep goes (a progress line on stderr, each record to the
// reporter) and says when it ends (the results file written, the store, the data-parallel summary).
#include "cli/run_console.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "core/clock.h"
#include "core/subprocess.h"

namespace trainbench::cli {
namespace {

std::string duration_text(double s) {
  const long t = static_cast<long>(s + 0.5);
  if (t >= 3600) return fmt::format("{}h{:02}m", t / 3600, (t % 3600) / 60);
  if (t >= 60) return fmt::format("{}m{:02}s", t / 60, t % 60);
  return fmt::format("{}s", t);
}

class ConsoleProgress final : public SweepObserver {
 public:
  explicit ConsoleProgress(Reporter& reporter) : reporter_(reporter) {}

  void case_starting(size_t index, size_t count, const Case& c, bool searching) override {
    const double elapsed = seconds_since(start_);
    std::string eta = "estimating";
    if (index > 0) {
      eta = "~" + duration_text(elapsed / static_cast<double>(index) * static_cast<double>(count - index)) + " left";
    }
    const std::string progress = fmt::format("[case {} of {} | {} elapsed | {}] {}", index + 1, count,
                                             duration_text(elapsed), eta, c.descriptor());
    if (tty_) {
      std::cerr << "\r\033[K" << progress << std::flush;
    } else {
      std::cerr << progress << "\n";
    }
    if (searching && tty_) std::cerr << "\n";  // the search prints a line per try
  }

  void try_ended(const Case& trial, const Record& r) override { say_try(trial, r); }

  void journal_failed(const std::string& why) override {
    std::cerr << "trainbench: warning: " << why
              << "; the run goes on and its results file will hold every case, but a kill before its end "
                 "loses those not in the journal\n";
  }

  void case_finished(const Record& r) override {
    clear_line();
    reporter_.record(r);
  }

  void sweep_ended() override { clear_line(); }

 private:
  void clear_line() {
    if (tty_) std::cerr << "\r\033[K" << std::flush;
  }

  Reporter& reporter_;
  const bool tty_ = isatty(STDERR_FILENO) != 0;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// One line per data-parallel record: global throughput, scaling efficiency, communication share.
std::string dist_summary(const std::vector<Record>& records) {
  std::string out;
  for (const auto& r : records) {
    if (!r.dist || !r.ok()) continue;
    const DistInfo& d = *r.dist;
    std::string scaling = "no one-process baseline";
    if (std::isfinite(d.scaling_efficiency)) {
      scaling = fmt::format("scaling efficiency {:.1f}% (one process: {:.4g} {})", 100.0 * d.scaling_efficiency,
                            d.single_process_throughput, r.unit);
    }
    out += fmt::format(
        "{}: {} rank{} ({}): {:.4g} {} global; {}; communication: {:.1f}% of step time exposed, "
        "{:.1f}% in flight\n",
        r.name, d.world_size, d.world_size == 1 ? "" : "s", d.backend, r.throughput, r.unit, scaling,
        100.0 * d.comm_share, 100.0 * d.comm_total_share);
  }
  return out;
}

}  // namespace

std::unique_ptr<SweepObserver> console_progress(Reporter& reporter) {
  return std::make_unique<ConsoleProgress>(reporter);
}

int write_run(const RunOptions& o, const RunPlan& plan, const Context& context, Resumed& resumed, Swept& swept,
              Journal& journal, Reporter& reporter) {
  const size_t fresh = swept.fresh.size(), todo = resumed.todo.size();
  const ResultsFile results = write_run_results(o.output, plan, context, resumed, swept, journal);
  if (!o.report.empty()) report_after_run(o.output, o.report);

  const double total = seconds_since(swept.start);
  reporter.end(results);
  if (plan.dist) (plan.format->console ? std::cout : std::cerr) << dist_summary(results.benchmarks) << std::flush;
  if (swept.interrupted) {
    journal.close();
    if (plan.dist) {  // --resume does not work with --dist
      std::cerr << fmt::format("interrupted after {} of {} case(s); finished cases are in {}\n", fresh, todo, o.output);
    } else {
      std::cerr << fmt::format(
          "interrupted after {} of {} case(s); finished cases are in {} — continue with "
          "`trainbench run ... --resume -o {}`\n",
          fresh, todo, o.output, o.output);
    }
    return keep_in_store(o.store.spec(), results, o.output, interrupt_exit_code());
  }
  remove_journal(o.output, journal);
  size_t errors = 0;
  for (const auto& r : results.benchmarks) errors += r.status == Status::error ? 1 : 0;
  std::cerr << fmt::format("{} case(s) in {}; results: {}{}\n", fresh, duration_text(total), o.output,
                           errors ? fmt::format(" ({} failed)", errors) : "");
  return keep_in_store(o.store.spec(), results, o.output, errors ? kExitFailure : kExitOk);
}

}  // namespace trainbench::cli
