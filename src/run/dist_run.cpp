#include "run/dist_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include "core/failure.h"
#include "core/value_rules.h"
#include "core/subprocess.h"
#include "runner/child.h"
#include "runner/measure.h"
#include "runner/plan.h"

namespace trainbench {
namespace {

std::string text_of(const std::vector<uint8_t>& v) { return std::string(v.begin(), v.end()); }
std::vector<uint8_t> bytes_of(const std::string& s) { return std::vector<uint8_t>(s.begin(), s.end()); }

std::chrono::milliseconds as_milliseconds(double s) {
  return std::chrono::milliseconds(static_cast<int64_t>(s * 1000.0));
}

}  // namespace

DistRun::DistRun(DistOptions options) : flags_(std::move(options)), env_(dist::dist_env_from_process()) {}

std::string DistRun::key(size_t index, const std::string& what) const {
  return "trainbench/case/" + std::to_string(index) + "/" + what;
}

std::string DistRun::backend_for(const Case& c) const {
  return dist::resolve_backend(flags_.backend, c.device.is_gpu());
}

void DistRun::start(const std::vector<Case>& plan, MeasureOptions& measure) {
  for (const auto& c : plan) {
    (void)backend_for(c);  // a backend the build or device cannot use fails before anything runs
    if (c.forward_only) throw InputError("--dist times training: drop --forward-only (" + c.descriptor() + ")");
  }
  // The workers of one node share its cores: threads 0 (one per core) becomes cores / local workers,
  // in the baseline too, so that the baseline is one rank's share of the machine.
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  measure.auto_threads = std::max(1, cores / env_.local_world_size);

  try {
    store_ = dist::connect_store(env_, leader(), flags_.timeout_s);
  } catch (const std::exception& e) {
    throw std::runtime_error("rank " + std::to_string(env_.rank) + ": cannot reach the store at " + env_.master_addr +
                             ":" + std::to_string(env_.master_port) + ": " + first_line(e.what()));
  }
  // Every rank must run the same cases with the same settings, or the collectives would not match.
  std::string agreed = std::to_string(env_.world_size) + "\n";
  for (const auto& a : measure.child_args()) agreed += a + " ";
  for (const auto& a : flags_.child_args(0)) agreed += a + " ";
  for (const auto& c : plan) agreed += "\n" + c.descriptor();
  if (leader()) {
    store_->set("trainbench/plan", bytes_of(agreed));
    return;
  }
  std::string lead;
  try {
    store_->wait({"trainbench/plan"}, as_milliseconds(flags_.timeout_s));
    lead = text_of(store_->get("trainbench/plan"));
  } catch (const std::exception& e) {
    throw std::runtime_error("rank " + std::to_string(env_.rank) + ": no plan from rank 0: " + first_line(e.what()));
  }
  if (lead != agreed) {
    throw InputError("rank " + std::to_string(env_.rank) + " was given other cases or settings than rank 0 (every " +
                     "rank must run the same command)");
  }
}

Record DistRun::lead_case(size_t index, const Case& c, const MeasureOptions& measure, bool* interrupted) {
  if (!lost_.empty()) {
    // A rank's runner is gone (its node died): no case can meet its collectives. The others stop at once.
    store_->set(key(index, "go"), bytes_of("stop: " + lost_));
    return failed_record(c, "not run: " + lost_);
  }
  double single = std::nan("");
  if (!flags_.no_baseline && env_.world_size > 1) {
    const Record b = run_case_isolated(c, measure.case_child(), interrupted);
    if (*interrupted) return b;
    if (b.ok()) single = b.throughput;
  }
  store_->set(key(index, "go"), bytes_of("go"));
  Record r = run_case_isolated(c, rank_child(index, measure), interrupted);
  if (*interrupted) return r;
  end_case(index, r);
  if (r.dist) {
    if (env_.world_size == 1 && r.ok()) single = r.throughput;  // one rank: its own baseline
    r.dist->single_process_throughput = single;
    r.dist->scaling_efficiency = r.throughput / (static_cast<double>(env_.world_size) * single);
  }
  return r;
}

DistRun::FollowEnd DistRun::follow(const std::vector<Case>& plan, const MeasureOptions& measure,
                                   const std::function<void(const std::string& line)>& say) {
  install_interrupt_handlers();
  // Rank 0 measures the baseline first: wait as long as a case may take, plus the rendezvous timeout.
  const double go_wait_s = (measure.timeout_s > 0 ? measure.timeout_s : 7 * 24 * 3600.0) + flags_.timeout_s;
  for (size_t i = 0; i < plan.size(); ++i) {
    try {
      store_->wait({key(i, "go")}, as_milliseconds(go_wait_s));
    } catch (const std::exception& e) {
      if (interrupt_requested()) return FollowEnd::interrupted;
      say("trainbench: error: rank " + std::to_string(env_.rank) + ": lost rank 0 before case " + plan[i].descriptor() +
          ": " + first_line(e.what()));
      return FollowEnd::failed;
    }
    if (const std::string go = text_of(store_->get(key(i, "go"))); go != "go") {
      say("trainbench: error: rank " + std::to_string(env_.rank) + ": rank 0 stopped the sweep before case " +
          plan[i].descriptor() + ": " + go.substr(go.find(' ') + 1));
      return FollowEnd::failed;
    }
    bool interrupted = false;
    Record r = run_case_isolated(plan[i], rank_child(i, measure), &interrupted);
    if (interrupted) return FollowEnd::interrupted;
    end_case(i, r);
    if (!r.ok()) say("case " + plan[i].descriptor() + ": " + to_string(r.status) + ": " + r.error);
  }
  return FollowEnd::done;
}

CaseChild DistRun::rank_child(size_t index, const MeasureOptions& measure) {
  CaseChild child = measure.case_child(flags_.child_args(index));
  stuck_.clear();
  child.give_up = [this, index](pid_t pid) -> std::string {
    try {
      if (!store_->check({key(index, "failed")})) return "";
      const std::string why = text_of(store_->get(key(index, "failed")));
      stuck_ = "rank " + std::to_string(env_.rank) + "'s case child was " + process_state(pid) + " and was killed";
      return "the case failed on " + why + "; " + stuck_;
    } catch (const std::exception&) {
      return "";  // rank 0's store is gone: this rank's own collectives fail within --dist-timeout
    }
  };
  return child;
}

void DistRun::end_case(size_t index, Record& r) {
  const std::string me = "rank " + std::to_string(env_.rank);
  try {
    if (!r.ok() && stuck_.empty() && !store_->check({key(index, "failed")})) {
      store_->set(key(index, "failed"), bytes_of(me + ": " + r.error));
    }
    store_->set(key(index, "ended/" + std::to_string(env_.rank)), bytes_of(r.ok()            ? "ok"
                                                                           : !stuck_.empty() ? stuck_
                                                                                             : me + ": " + r.error));
  } catch (const std::exception&) {
    return;  // rank 0's store is gone: the next case's wait for its go says so
  }
  if (!leader()) return;
  // Every rank's side of this case has ended before the next one starts: no child of this case is left
  // holding a rank's cores or its place in the next rendezvous.
  for (int q = 1; q < env_.world_size; ++q) {
    std::string ended;
    try {
      store_->wait({key(index, "ended/" + std::to_string(q))}, as_milliseconds(flags_.timeout_s + 5.0));
      ended = text_of(store_->get(key(index, "ended/" + std::to_string(q))));
    } catch (const std::exception&) {
      ended = "rank " + std::to_string(q) + " did not end the case within " +
              fmt::format("{}", flags_.timeout_s + 5.0) + " s (--dist-timeout + 5): its node or its runner was lost";
      if (lost_.empty()) lost_ = "rank " + std::to_string(q) + " was lost in case " + std::to_string(index + 1);
    }
    if (ended == "ok" || r.error.find(ended) != std::string::npos) continue;
    if (r.ok()) {
      r.status = Status::error;
      r.error = ended;
    } else {
      r.error += "; " + ended;
    }
  }
}

}  // namespace trainbench
