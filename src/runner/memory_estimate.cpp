#include "runner/memory_estimate.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "memory/fit.h"
#include "results/number_format.h"
#include "runner/maxbatch.h"

namespace trainbench {

std::string prediction_assumptions(const DeviceSpec& device) {
  if (device.is_gpu()) {
    return "peak reserved bytes of the caching allocator on this GPU model, settings and LibTorch; the CUDA/HIP "
           "context is not included; the convolution search's workspaces at small batches and the allocator's "
           "segments at large ones keep the line off by tens of percent (measure with maxbatch --memory-limit); "
           "another GPU may pick other convolution algorithms with other workspaces";
  }
  return "address-space growth of the case on this CPU, LibTorch and allocator setting (what --memory-limit caps); "
         "tensor bytes transfer to other devices only as a lower bound (their kernels pick their own workspaces)";
}

namespace {

// "8" or "2, 1", in the order given.
std::string numbers(const std::vector<int64_t>& batches) {
  std::string s;
  for (size_t i = 0; i < batches.size(); ++i) s += (i ? ", " : "") + std::to_string(batches[i]);
  return s;
}

// "batch 8" or "batches 2, 1".
std::string batch_list(const std::vector<int64_t>& batches) {
  return (batches.size() == 1 ? "batch " : "batches ") + numbers(batches);
}

// Measured peaks per batch, in the order run.
struct Points {
  std::vector<int64_t> batches, tensors, footprints, forward_live;
};

// Every tensor byte lives in the footprint, so the footprint cannot grow slower than the tensors for
// long. Between nearby batches it can: the heap (CPU, 64 MiB top pad) and the caching allocator (GPU
// segments) grow in steps, and a step that covers both batches gives a slope near 0 and a prediction
// at the batch cap. The slope is then the tensors', through the largest batch's footprint. True when so.
bool take_tensor_slope_if_stepped(MemoryFit& footprint, const MemoryFit& tensors) {
  if (footprint.per_sample_bytes >= tensors.per_sample_bytes) return false;
  footprint.per_sample_bytes = tensors.per_sample_bytes;
  footprint.fixed_bytes = static_cast<double>(footprint.peaks.back()) -
                          tensors.per_sample_bytes * static_cast<double>(footprint.batches.back());
  return true;
}

// The two lines over the measured batches not set aside (all of them when fewer than two are left).
struct Lines {
  MemoryFit tensors, footprint;
  bool stepped = false;     // the footprint's slope is the tensors' (take_tensor_slope_if_stepped)
  bool aside_only = false;  // the batches set aside are all there is: the line stands on them
};

Lines fit_lines(const Points& p, const std::vector<int64_t>& set_aside, const DeviceSpec& device) {
  Points on;
  for (size_t i = 0; i < p.batches.size(); ++i) {
    if (std::find(set_aside.begin(), set_aside.end(), p.batches[i]) != set_aside.end()) continue;
    on.batches.push_back(p.batches[i]);
    on.tensors.push_back(p.tensors[i]);
    on.footprints.push_back(p.footprints[i]);
  }
  Lines l;
  l.aside_only = on.batches.size() < 2;  // the larger batches did not train: fit on the set-aside ones
  if (l.aside_only) on = p;
  l.tensors = memory::fit_memory(on.batches, on.tensors, "tensors");
  l.footprint = memory::fit_memory(on.batches, on.footprints, device.is_gpu() ? "reserved" : "address space");
  l.stepped = take_tensor_slope_if_stepped(l.footprint, l.tensors);
  return l;
}

// The batch to measure next so that `size_bytes` is predicted from a measured batch within `reach` of
// the predicted one (predicted / reach <= batch <= predicted x reach): 3/4 of the predicted batch; 0
// when such a batch is measured already.
int64_t refinement_batch(const Points& p, const std::vector<int64_t>& set_aside, const DeviceSpec& device,
                         int64_t size_bytes, double reach) {
  const Lines l = fit_lines(p, set_aside, device);
  const int64_t predicted = memory::predict(l.footprint, size_bytes).largest_batch;
  if (predicted >= memory::kMaxPredictedBatch || predicted < 2) return 0;
  const double want = static_cast<double>(predicted);
  for (int64_t b : l.footprint.batches) {
    if (static_cast<double>(b) * reach >= want && static_cast<double>(b) <= want * reach) return 0;
  }
  return predicted / 4 * 3 + predicted % 4 * 3 / 4;  // 3/4, without overflow near the cap
}

// The next batch to try: the next one asked for (`next` advances) while it is below every batch that
// ran out of memory, else halfway between the largest that trained and the smallest that did not; 0
// when no untried batch is left.
int64_t next_batch(const std::vector<int64_t>& asked, size_t& next, const std::vector<int64_t>& oom,
                   const std::vector<int64_t>& trained) {
  if (next < asked.size() && (oom.empty() || asked[next] < oom.back())) return asked[next++];
  if (oom.empty()) return 0;
  int64_t lo = 0;  // the largest batch that trained below the smallest that did not
  for (int64_t t : trained) {
    if (t < oom.back()) lo = std::max(lo, t);
  }
  const int64_t b = lo + (oom.back() - lo) / 2;
  return b > lo ? b : 0;
}

// A try that neither trained with its memory measured nor ran out of memory ends the estimate.
std::string try_failure(int64_t batch, const Record& r) {
  return "batch " + std::to_string(batch) + ": " + std::string(to_string(r.status)) +
         (r.error.empty() ? (r.memory ? "" : " (no memory measured)") : " (" + r.error + ")");
}

// Why no line can be fitted when fewer than two batches trained.
std::string too_few_batches(const std::vector<int64_t>& trained, const std::vector<int64_t>& oom) {
  if (trained.empty()) return "not even batch 1 trains (" + batch_list(oom) + " ran out of memory)";
  return "only batch " + std::to_string(trained.front()) + " trains (" + batch_list(oom) +
         " ran out of memory); a fit needs two batches";
}

// What the fit assumed, for the record: the device's rule, then each way the measured batches
// departed from those asked for (a stepped footprint, a hidden peak, batches added to refine, batches
// that ran out of memory).
std::string fit_assumptions(const Lines& lines, const DeviceSpec& device, const std::vector<int64_t>& fitted,
                            const std::vector<int64_t>& oom, const std::vector<int64_t>& hidden,
                            const std::vector<int64_t>& refined, const std::vector<int64_t>& refined_for,
                            double reach) {
  std::string a = prediction_assumptions(device);
  if (lines.stepped) {
    a += "; the footprint grew slower than the tensors between the measured batches (it grows in "
         "steps), so its slope is the tensors' through the largest batch: a lower bound, the predicted "
         "batches an upper bound";
  }
  if (!hidden.empty()) {
    a += "; at batches " + numbers(hidden) +
         " the peak was batch-independent (the forward's live bytes "
         "grew faster than it: the activations had not yet reached it), so " +
         (lines.aside_only ? std::string("the line through them is too flat (the larger batches measured after "
                                         "them did not train): the predicted batches are an upper bound")
                           : "the line stands on the larger batches measured after them");
  }
  if (!refined.empty()) {
    // Each size once: one size may have had two batches added for it.
    std::string for_sizes;
    std::vector<int64_t> named;
    for (const int64_t size : refined_for) {
      if (std::find(named.begin(), named.end(), size) != named.end()) continue;
      for_sizes += (named.empty() ? "" : ", ") + format_bytes(size);
      named.push_back(size);
    }
    a += fmt::format("; {} added so that the largest batch for {} is read from a measured batch within {:g}x of it "
                     "(3/4 of the predicted batch each time)",
                     batch_list(refined), for_sizes, reach);
  }
  if (lines.tensors.per_sample_bytes > 0.0) {
    a += fmt::format(
        "; a size beyond batch {} has an interval: at most the batch at which the tensors alone fill it (the "
        "tensor peak stays on its line), at least the batch at which the {} fills it growing per sample {:.2g}x "
        "as fast as the tensors (the most it grew per tensor byte between the measured batches, and at least {:g})",
        lines.footprint.batches.back(), lines.footprint.basis,
        memory::footprint_per_tensor_byte(lines.footprint, lines.tensors), memory::kFootprintPerTensorByte);
  }
  if (!oom.empty()) {
    // Fewer or smaller points than asked for: the line may be steeper or flatter than at the batches
    // asked for, and with two points its linearity is unchecked.
    a +=
        "; fitted on batches " + numbers(fitted) + " because " + batch_list(oom) + " ran out of memory while measuring";
  }
  return a;
}

// What the measuring loop of estimate_memory found.
struct Measured {
  Points pts;
  std::vector<int64_t> oom;
  std::vector<int64_t> hidden;       // measured batches whose peak the activations did not reach (flat_until)
  std::vector<int64_t> refined;      // batches measured near a size's predicted batch (refinement_batch)
  std::vector<int64_t> refined_for;  // the size each was measured for
};

// The batches asked for, smallest first, until one runs out of memory; then batches below the smallest
// that did (halving while none has trained, bisecting above the largest that has) until as many points
// as asked for trained or no untried batch is left between the two. With all measured and none out of
// memory: once, the batches where a peak hidden below a batch-independent one shows; then, a batch
// nearer each size to refine for. Every try goes into out.tries; a failure ends it (out.failure).
Measured measure_batches(const Case& base, const std::vector<int64_t>& batches,
                         const std::function<Record(const Case&)>& run_one, const std::vector<int64_t>& refine_sizes,
                         int64_t max_refine_batch, double reach, MemoryEstimate& out) {
  Measured m;
  std::vector<int64_t> asked = batches;
  std::vector<int64_t> refine_order = refine_sizes;  // smallest first (a later size may still add a smaller batch)
  std::sort(refine_order.begin(), refine_order.end());
  std::vector<int> refinements(refine_order.size(), 0);
  bool hidden_checked = false;
  size_t wanted = asked.size(), next = 0;
  while (m.pts.batches.size() < wanted) {
    const int64_t b = next_batch(asked, next, m.oom, m.pts.batches);
    if (b == 0) break;
    Case c = base;
    c.batch = b;
    Record r = run_one(c);
    out.tries.push_back(r);
    if (r.status == Status::oom) {
      m.oom.push_back(b);  // each one smaller than the last: only batches below it are tried from here
      continue;
    }
    if (r.status != Status::ok || !r.memory) {
      out.failure = try_failure(b, r);
      return m;
    }
    m.pts.batches.push_back(b);
    m.pts.tensors.push_back(r.memory->peak_bytes);
    m.pts.footprints.push_back(r.memory->footprint_peak_bytes);
    m.pts.forward_live.push_back(r.memory->forward_live_bytes);
    if (m.pts.batches.size() < wanted || !m.oom.empty()) continue;
    if (!hidden_checked) {
      hidden_checked = true;
      const int64_t from = memory::flat_until(m.pts.batches, m.pts.tensors, m.pts.forward_live);
      if (from > 0) {
        m.hidden = m.pts.batches;
        asked.push_back(from);
        asked.push_back(2 * from);
        wanted += 2;
        continue;
      }
    }
    for (size_t k = 0; k < refine_order.size(); ++k) {
      if (refine_order[k] <= 0 || refinements[k] >= kMaxRefinements) continue;
      const int64_t want = refinement_batch(m.pts, m.hidden, base.device, refine_order[k], reach);
      const int64_t at = std::min(want, max_refine_batch);
      if (want == 0 || std::find(m.pts.batches.begin(), m.pts.batches.end(), at) != m.pts.batches.end()) continue;
      ++refinements[k];
      m.refined.push_back(at);
      m.refined_for.push_back(refine_order[k]);
      asked.push_back(at);
      ++wanted;
      break;
    }
  }
  return m;
}

}  // namespace

MemoryEstimate estimate_memory(const Case& base, const std::vector<int64_t>& batches, const std::vector<int64_t>& sizes,
                               int64_t requested_batch, const std::function<Record(const Case&)>& run_one,
                               const std::vector<int64_t>& refine_sizes, int64_t max_refine_batch, double reach,
                               std::optional<int64_t> gpu_context_bytes) {
  MemoryEstimate out;
  Measured measured = measure_batches(base, batches, run_one, refine_sizes, max_refine_batch, reach, out);
  if (!out.failure.empty()) return out;
  const Points& pts = measured.pts;
  std::vector<int64_t>& oom = measured.oom;
  if (pts.batches.size() < 2) {
    out.failure = too_few_batches(pts.batches, oom);
    return out;
  }
  const Lines lines = fit_lines(pts, measured.hidden, base.device);
  // The fit rides on the record of the largest batch on the line.
  size_t& carrier = out.carrier;
  for (size_t i = 0; i < out.tries.size(); ++i) {
    if (out.tries[i].status == Status::ok && out.tries[i].batch_size == lines.footprint.batches.back()) carrier = i;
  }
  MemoryInfo& m = *out.tries[carrier].memory;
  m.fixed_bytes = static_cast<int64_t>(std::llround(lines.tensors.fixed_bytes));
  m.activations_bytes_per_sample = lines.tensors.per_sample_bytes;
  m.fit = lines.footprint;
  std::sort(oom.begin(), oom.end());
  out.oom_batches = oom;
  m.fit->oom_batches = oom;
  if (!lines.aside_only) m.fit->set_aside_batches = measured.hidden;
  m.requested_batch = std::max<int64_t>(0, requested_batch);
  const auto requested = requested_batch > 0 ? std::optional<int64_t>(requested_batch) : std::nullopt;
  for (int64_t size : sizes) {
    m.predictions.push_back(memory::predict(lines.footprint, size, requested));
    memory::add_interval(m.predictions.back(), lines.footprint, lines.tensors);
  }
  if (gpu_context_bytes && !base.device.is_gpu()) {
    m.gpu_target = memory::predict_gpu_target(lines.tensors, sizes, *gpu_context_bytes);
  }
  m.assumptions = fit_assumptions(lines, base.device, pts.batches, oom, measured.hidden, measured.refined,
                                  measured.refined_for, reach);
  out.summary = out.tries[carrier];
  out.fitted = true;
  return out;
}

void try_under_sizes(MemoryEstimate& e, const Case& base, const std::vector<int64_t>& sizes, double within,
                     const std::function<Record(const Case&, int64_t)>& run_under) {
  if (!e.fitted) return;
  std::vector<int64_t> order = sizes;
  std::sort(order.begin(), order.end());
  std::vector<int64_t> tried;  // the sizes whose search ended, for the assumptions
  for (int64_t size : order) {
    MemoryInfo& m = *e.summary.memory;
    const auto p = std::find_if(m.predictions.begin(), m.predictions.end(),
                                [&](const MemoryPrediction& q) { return q.size_bytes == size; });
    if (p == m.predictions.end() || p->trained_under_limit > 0 || p->out_of_memory_under_limit > 0) continue;
    // What the measuring already ran under this very size (--memory-limit): near a limit the same
    // batch may train in one run and not in the next, so a batch that ran out bounds the search and
    // one that trained is not tried again.
    int64_t known_fits = 0, too_big = 0;
    auto bracket = [&](const Record& t) {
      if (t.status == Status::ok) known_fits = std::max(known_fits, t.batch_size);
      if (t.status == Status::oom && (too_big == 0 || t.batch_size < too_big)) too_big = t.batch_size;
    };
    for (const auto& t : e.tries) {
      if (t.memory_limit_bytes == size) bracket(t);
    }
    // A run-to-run flip (a batch trained at or above one that ran out): the one that ran out still bounds
    // the search, and batches below it are tried afresh.
    if (too_big != 0 && known_fits >= too_big) known_fits = 0;
    const size_t first_try = e.tries.size();
    // Each next try is aimed by the line through the latest batches that trained, these tries among them.
    const AimFn aim = [&](const std::vector<Record>& tries) {
      std::vector<Record> all(e.tries.begin(), e.tries.begin() + static_cast<std::ptrdiff_t>(first_try));
      all.insert(all.end(), tries.begin(), tries.end());
      return aim_batch(all, size);
    };
    const int64_t cap = too_big != 0 ? too_big - 1 : memory::kMaxPredictedBatch;
    MaxBatchResult r;
    if (cap >= 1) {
      r = find_max_batch_near(
          base, std::clamp<int64_t>(p->largest_batch, 1, cap), known_fits, cap,
          [&](const Case& c) { return run_under(c, size); }, aim, within);
    }
    e.tries.insert(e.tries.end(), r.tries.begin(), r.tries.end());
    if (!r.failure.empty()) {
      e.try_failure = fmt::format("trying {} under it: {}", format_bytes(size), r.failure);
      break;  // an error (or an interrupt) ends the trying, as it ends a search
    }
    for (const auto& t : r.tries) bracket(t);
    MemoryPrediction q = *p;
    q.line_batch = p->largest_batch;
    q.trained_under_limit = r.largest;
    q.out_of_memory_under_limit = too_big;
    q.largest_batch = r.largest;
    q.largest_batch_low = r.largest;
    q.largest_batch_high = too_big > 0 ? too_big - 1 : r.largest;
    if (m.requested_batch > 0) {
      if (m.requested_batch <= r.largest) q.requested_fits = true;
      if (too_big > 0 && m.requested_batch >= too_big) q.requested_fits = false;
    }
    tried.push_back(size);
    for (MemoryInfo* mi : {&m, &*e.tries[e.carrier].memory}) {
      for (auto& each : mi->predictions) {
        if (each.size_bytes == size) each = q;
      }
    }
  }
  if (tried.empty()) return;
  std::string names;
  for (size_t i = 0; i < tried.size(); ++i) names += (i ? ", " : "") + format_bytes(tried[i]);
  const std::string said = fmt::format(
      "; {} tried under {} as a memory limit: the largest batch is one that trained under it, {}", names,
      tried.size() == 1 ? "itself" : "themselves",
      within > 0.0 ? fmt::format("at most {:g}% (or 1) below the smallest that ran out less one", 100.0 * within)
                   : std::string("one below the smallest that ran out"));
  e.summary.memory->assumptions += said;
  e.tries[e.carrier].memory->assumptions += said;
}

int64_t aim_batch(const std::vector<Record>& tries, int64_t size_bytes) {
  // The footprint and tensor peaks of each batch that trained, the latest try per batch.
  std::vector<std::pair<int64_t, const MemoryInfo*>> trained;
  for (const auto& r : tries) {
    if (r.status != Status::ok || !r.memory || r.memory->footprint_peak_bytes <= 0) continue;
    trained.erase(
        std::remove_if(trained.begin(), trained.end(), [&](const auto& t) { return t.first == r.batch_size; }),
        trained.end());
    trained.emplace_back(r.batch_size, &*r.memory);
  }
  if (trained.size() < 2) return 0;
  std::sort(trained.begin(), trained.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  const auto& lo = trained[trained.size() - 2];
  const auto& hi = trained.back();
  const MemoryFit tensors =
      memory::fit_memory({lo.first, hi.first}, {lo.second->peak_bytes, hi.second->peak_bytes}, "tensors");
  MemoryFit footprint = memory::fit_memory(
      {lo.first, hi.first}, {lo.second->footprint_peak_bytes, hi.second->footprint_peak_bytes}, "footprint");
  take_tensor_slope_if_stepped(footprint, tensors);
  return memory::predict(footprint, size_bytes).largest_batch;
}

MaxBatchResult find_max_batch_predicted(const Case& c, int64_t limit, int64_t start, int64_t max_batch,
                                        const std::function<Record(const Case&)>& run_one, int64_t* predicted) {
  *predicted = 0;
  if (max_batch < kMaxBatchFitBatches[1]) return find_max_batch(c, start, max_batch, run_one);
  // Going up, no try is more than twice the largest batch that trained before it: a batch added to
  // refine the line too (a prediction far above the fit's batches, under a limit above what the host
  // holds, would otherwise be tried at once).
  const int64_t refine_cap = std::min(max_batch, 2 * kMaxBatchFitBatches[1]);
  const MemoryEstimate e =
      estimate_memory(c, {kMaxBatchFitBatches[0], kMaxBatchFitBatches[1]}, {limit}, 0, run_one, {limit}, refine_cap);
  MaxBatchResult m;
  if (!e.fitted) {
    // Fewer than two batches trained. When the fit's tries already bracket the answer (the largest that
    // trained, 0 for none, is one below the smallest that ran out of memory) it is the answer; otherwise
    // the classic search finds out from `start` what does fit.
    const Record* trained = nullptr;
    int64_t too_big = 0;
    bool only_ok_or_oom = true;
    for (const auto& r : e.tries) {
      if (r.status == Status::ok && (!trained || r.batch_size > trained->batch_size)) trained = &r;
      if (r.status == Status::oom && (too_big == 0 || r.batch_size < too_big)) too_big = r.batch_size;
      only_ok_or_oom = only_ok_or_oom && (r.status == Status::ok || r.status == Status::oom);
    }
    const int64_t largest = trained ? trained->batch_size : 0;
    if (only_ok_or_oom && too_big == largest + 1) {
      m.largest = largest;
      if (trained) m.best = *trained;
    } else {
      m = find_max_batch(c, start, max_batch, run_one);
    }
  } else {
    // Under a small limit the fit may stand on batches smaller than kMaxBatchFitBatches; the smallest that ran
    // out of memory bounds the search from above (the answer is below it).
    const int64_t trained = e.summary.batch_size;
    const int64_t too_big = e.oom_batches.empty() ? 0 : e.oom_batches.front();
    *predicted = e.summary.memory->predictions.front().largest_batch;
    if (too_big != 0 && too_big - trained <= 1) {
      m.largest = trained;  // already bracketed by the fit's own tries
    } else {
      // The first try too goes up no faster than doubling the largest batch that trained.
      const int64_t first =
          std::min(too_big != 0 ? std::min(*predicted, too_big - 1) : *predicted, std::max(2 * trained, trained + 1));
      // Each next try is aimed by the line through the latest batches that trained, the fit's among them.
      const AimFn aim = [&](const std::vector<Record>& tries) {
        std::vector<Record> all = e.tries;
        all.insert(all.end(), tries.begin(), tries.end());
        return aim_batch(all, limit);
      };
      m = find_max_batch_near(c, first, trained, too_big != 0 ? std::min(max_batch, too_big - 1) : max_batch, run_one,
                              aim);
      // Capped below a batch known not to train, reaching the cap is the answer, not the --max-batch limit.
      if (too_big != 0 && m.largest == too_big - 1 && too_big - 1 < max_batch) m.hit_limit = false;
    }
    if (m.largest == trained && m.best.batch_size != m.largest) m.best = e.summary;
  }
  m.tries.insert(m.tries.begin(), e.tries.begin(), e.tries.end());
  return m;
}

}  // namespace trainbench
