#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include "cli_util.h"
#include "results/number_format.h"
#include "results/results_file.h"
#include "runner/maxbatch.h"
#include "runner/memory_estimate.h"
#include "results/printer_memory.h"
#include "results/memory_info.h"

#include <nlohmann/json.hpp>

namespace trainbench {
namespace {

// A fake device on which batches up to `fits` train and larger ones run out of memory.
struct FakeDevice {
  int64_t fits;
  std::vector<int64_t> tried;
  Record operator()(const Case& c) {
    tried.push_back(c.batch);
    Record r;
    r.name = c.descriptor();
    r.batch_size = c.batch;
    r.status = c.batch <= fits ? Status::ok : Status::oom;
    r.throughput = static_cast<double>(c.batch);
    return r;
  }
};

Case base_case() {
  Case c;
  c.model = "resnet18";
  c.batch = 1;
  return c;
}

TEST(MaxBatch, DoublesThenBisectsToTheExactLimit) {
  for (int64_t limit : {1, 2, 3, 5, 37, 64, 100, 1000}) {
    FakeDevice dev{limit, {}};
    const MaxBatchResult m = find_max_batch(base_case(), 1, 1 << 20, std::ref(dev));
    EXPECT_EQ(m.largest, limit);
    EXPECT_EQ(m.best.batch_size, limit);
    EXPECT_EQ(m.best.status, Status::ok);
    EXPECT_TRUE(m.failure.empty());
    EXPECT_EQ(m.tries.size(), dev.tried.size());
    // logarithmic: doublings plus bisection steps
    EXPECT_LE(dev.tried.size(), 2u * 11u) << limit;
  }
}

TEST(MaxBatch, SequenceOfTriesForThirtySeven) {
  FakeDevice dev{37, {}};
  (void)find_max_batch(base_case(), 1, 1 << 20, std::ref(dev));
  EXPECT_EQ(dev.tried, (std::vector<int64_t>{1, 2, 4, 8, 16, 32, 64, 48, 40, 36, 38, 37}));
}

TEST(MaxBatch, NothingFitsGivesZero) {
  FakeDevice dev{0, {}};
  const MaxBatchResult m = find_max_batch(base_case(), 1, 1024, std::ref(dev));
  EXPECT_EQ(m.largest, 0);
  EXPECT_EQ(dev.tried, std::vector<int64_t>{1});
}

TEST(MaxBatch, StartAboveTheLimitBisectsDown) {
  FakeDevice dev{5, {}};
  const MaxBatchResult m = find_max_batch(base_case(), 16, 1024, std::ref(dev));
  EXPECT_EQ(m.largest, 5);
}

TEST(MaxBatch, StopsAtTheBatchCap) {
  FakeDevice dev{1000000, {}};
  const MaxBatchResult m = find_max_batch(base_case(), 1, 100, std::ref(dev));
  EXPECT_EQ(m.largest, 100);
  EXPECT_TRUE(m.hit_limit);
  EXPECT_EQ(dev.tried.back(), 100);
}

TEST(MaxBatch, AnErrorStopsTheSearch) {
  int calls = 0;
  const MaxBatchResult m = find_max_batch(base_case(), 1, 1024, [&](const Case& c) {
    ++calls;
    Record r;
    r.batch_size = c.batch;
    r.status = c.batch < 4 ? Status::ok : Status::error;
    r.error = "boom";
    return r;
  });
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(m.largest, 2);
  EXPECT_NE(m.failure.find("boom"), std::string::npos);
}

TEST(MaxBatchNear, AnExactPredictionCostsTwoTries) {
  for (int64_t limit : {9, 37, 100, 1000}) {
    FakeDevice dev{limit, {}};
    const MaxBatchResult m = find_max_batch_near(base_case(), limit, 8, 1 << 20, std::ref(dev));
    EXPECT_EQ(m.largest, limit);
    EXPECT_EQ(dev.tried, (std::vector<int64_t>{limit, limit + 1}));
  }
}

TEST(MaxBatchNear, FindsTheExactLimitFromAnyPrediction) {
  for (int64_t limit : {1, 2, 9, 37, 100, 1000}) {
    for (int64_t predicted : {1, 5, 30, 36, 38, 45, 90, 110, 2000}) {
      FakeDevice dev{limit, {}};
      const int64_t known = std::min<int64_t>(limit, 4) == limit ? 0 : 4;  // a batch known to train, if any
      const MaxBatchResult m = find_max_batch_near(base_case(), predicted, known, 1 << 20, std::ref(dev));
      EXPECT_EQ(m.largest, limit) << "limit " << limit << " predicted " << predicted;
      EXPECT_EQ(m.tries.size(), dev.tried.size());
      // Never a batch twice, never one known to train.
      std::vector<int64_t> sorted = dev.tried;
      std::sort(sorted.begin(), sorted.end());
      EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end());
      for (int64_t b : dev.tried) EXPECT_GT(b, known);
      // A prediction within 10% costs fewer tries than doubling from 1 does.
      if (std::abs(predicted - limit) * 10 <= limit && limit >= 9) {
        FakeDevice classic{limit, {}};
        (void)find_max_batch(base_case(), 1, 1 << 20, std::ref(classic));
        EXPECT_LT(dev.tried.size(), classic.tried.size()) << "limit " << limit << " predicted " << predicted;
      }
    }
  }
}

TEST(MaxBatchNear, StopsAtTheBatchCap) {
  FakeDevice dev{1000, {}};
  const MaxBatchResult m = find_max_batch_near(base_case(), 5000, 8, 100, std::ref(dev));
  EXPECT_EQ(m.largest, 100);
  EXPECT_TRUE(m.hit_limit);
  EXPECT_EQ(dev.tried, std::vector<int64_t>{100});
}

// A device whose footprint grows as 10 b^2 bytes (convex: the line through two tries always aims short
// of the limit going up and long of it coming down) under 10^7 bytes: b = 1000 trains, 1001 does not.
struct ConvexDevice {
  std::vector<int64_t> tried;
  Record operator()(const Case& c) {
    tried.push_back(c.batch);
    Record r;
    r.batch_size = c.batch;
    const int64_t footprint = 10 * c.batch * c.batch;
    r.status = footprint <= 10000000 ? Status::ok : Status::oom;
    if (r.status == Status::ok) {
      MemoryInfo m;
      m.peak_bytes = footprint / 2;
      m.footprint_peak_bytes = footprint;
      r.memory = m;
    }
    return r;
  }
};

TEST(MaxBatchNear, AnAimedSearchFindsTheExactLimitInFewerTries) {
  const AimFn aim = [](const std::vector<Record>& tries) { return aim_batch(tries, 10000000); };
  for (int64_t predicted : {300, 500, 990, 1000, 1010, 1500, 4000}) {
    ConvexDevice aimed, plain;
    const MaxBatchResult a = find_max_batch_near(base_case(), predicted, 250, 1 << 20, std::ref(aimed), aim);
    const MaxBatchResult p = find_max_batch_near(base_case(), predicted, 250, 1 << 20, std::ref(plain));
    EXPECT_EQ(a.largest, 1000) << "predicted " << predicted;
    EXPECT_EQ(p.largest, 1000) << "predicted " << predicted;
    EXPECT_LE(aimed.tried.size(), plain.tried.size()) << "predicted " << predicted;
    std::vector<int64_t> sorted = aimed.tried;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end()) << "a batch tried twice";
  }
  // From 500 the 1, 2, 4, ... walk up passes 1000 at 1011 and bisects back. The aimed search, by hand:
  // 500 trains; one point is no line, so 501; the line through 500 and 501 (10010 a sample from
  // -2505000) puts the limit at 1249, beyond twice 501: 1002 is tried and runs out; it was not aimed,
  // so the bracket (501, 1002) is bisected: 751 trains; the line through 501 and 751 aims 1099, outside
  // the bracket: bisect, 876; through 751 and 876: 1018, outside: 939; through 876 and 939: 1004,
  // outside: 970; through 939 and 970: 1000 (trains); through 970 and 1000: 1000 again, so bisect: 1001
  // runs out.
  ConvexDevice aimed, plain;
  (void)find_max_batch_near(base_case(), 500, 250, 1 << 20, std::ref(aimed), aim);
  (void)find_max_batch_near(base_case(), 500, 250, 1 << 20, std::ref(plain));
  EXPECT_EQ(aimed.tried, (std::vector<int64_t>{500, 501, 1002, 751, 876, 939, 970, 1000, 1001}));
  EXPECT_LT(aimed.tried.size(), plain.tried.size());
}

// Seen on a GPU under --memory-limit 4G (resnet18, H100): as the batch grows the convolution search
// picks algorithms with smaller workspaces, so the footprint of two large batches barely differs and
// the line through them aims at any batch (it aimed 65536, the --max-batch, and 30 tries followed).
// Here the footprint rises to batch 100 and falls beyond it; batch 155 is the last that fits. Going
// up, no try is more than twice the largest batch that trained before it.
struct SearchingWorkspaceDevice {
  std::vector<int64_t> tried;
  Record operator()(const Case& c) {
    tried.push_back(c.batch);
    Record r;
    r.batch_size = c.batch;
    r.status = c.batch <= 155 ? Status::ok : Status::oom;
    if (r.status == Status::ok) {
      const int64_t b = c.batch;
      MemoryInfo m;
      m.footprint_peak_bytes = b <= 100 ? 1000000000 + 29000000 * b : 3900000000 - 1000000 * (b - 100);
      m.peak_bytes = m.footprint_peak_bytes - 50000000;
      r.memory = m;
    }
    return r;
  }
};

TEST(MaxBatchNear, ALineThatAimsAnywhereGoesUpNoFasterThanDoubling) {
  const AimFn aim = [](const std::vector<Record>& tries) { return aim_batch(tries, int64_t{4} << 30); };
  SearchingWorkspaceDevice dev;
  const MaxBatchResult m = find_max_batch_near(base_case(), 58, 8, 65536, std::ref(dev), aim);
  EXPECT_EQ(m.largest, 155);
  int64_t trained = 8;
  for (int64_t b : dev.tried) {
    EXPECT_LE(b, 2 * std::max<int64_t>(trained, 58)) << "after batch " << trained << " trained";
    if (b <= 155) trained = std::max(trained, b);
  }
  EXPECT_LE(dev.tried.size(), 14u);
}

// A batch aimed near the limit that runs out of memory has the limit just below it: where the aim has
// nothing to say inside the bracket (it points at the batch that ran out), the search steps down from
// that batch by 1, then 2, until one trains, then bisects. The prediction trains, the aimed 196 does
// not: 195 trains and 196 is bracketed. The prediction itself runs out (106): 105 does too, 103 trains
// (two below 105), then the bracket (103, 105) is bisected: 104.
TEST(MaxBatchNear, BelowABatchThatRanOutTheSearchStepsDownUntilOneTrainsThenBisects) {
  FakeDevice dev{195, {}};
  const AimFn aim = [](const std::vector<Record>&) { return int64_t{196}; };
  const MaxBatchResult m = find_max_batch_near(base_case(), 192, 159, 1 << 20, std::ref(dev), aim);
  EXPECT_EQ(m.largest, 195);
  EXPECT_EQ(dev.tried, (std::vector<int64_t>{192, 196, 195}));
  FakeDevice over{103, {}};
  const MaxBatchResult d = find_max_batch_near(base_case(), 106, 78, 1 << 20, std::ref(over), aim);
  EXPECT_EQ(d.largest, 103);
  EXPECT_EQ(over.tried, (std::vector<int64_t>{106, 105, 103, 104}));
}

// An aim that is wrong every time (always far too high, always too low, always the same batch) slows
// the search but never stops it from finding the exact limit, nor makes it try a batch twice.
TEST(MaxBatchNear, AWrongAimStillFindsTheExactLimit) {
  const std::vector<AimFn> wrong = {
      [](const std::vector<Record>&) { return int64_t{1} << 40; },
      [](const std::vector<Record>&) { return int64_t{1}; },
      [](const std::vector<Record>&) { return int64_t{37}; },
  };
  for (const auto& aim : wrong) {
    for (int64_t limit : {9, 37, 100, 1000}) {
      for (int64_t predicted : {5, 36, 38, 110, 2000}) {
        FakeDevice dev{limit, {}};
        const MaxBatchResult m = find_max_batch_near(base_case(), predicted, 4, 1 << 20, std::ref(dev), aim);
        EXPECT_EQ(m.largest, limit) << "limit " << limit << " predicted " << predicted;
        std::vector<int64_t> sorted = dev.tried;
        std::sort(sorted.begin(), sorted.end());
        EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end());
        EXPECT_LE(dev.tried.size(), 40u);
      }
    }
  }
}

// Within 10%, as `memory` confirms a held size: the batch found trains and lies within the issue's
// goal of the exact answer (10% of it, or 1), never costs more tries than the exact search, and a
// prediction at most 10% below the answer costs two tries (it trains; one 10% above it does not).
TEST(MaxBatchNear, WithinAToleranceEndsOnceTheAnswerIsWithinIt) {
  for (int64_t limit : {1, 2, 9, 37, 69, 100, 374, 1000}) {
    for (int64_t predicted : {1, 5, 30, 36, 38, 45, 59, 62, 90, 110, 354, 2000}) {
      FakeDevice dev{limit, {}};
      const MaxBatchResult m = find_max_batch_near(base_case(), predicted, 0, 1 << 20, std::ref(dev), {}, 0.10);
      const std::string at = "limit " + std::to_string(limit) + " predicted " + std::to_string(predicted);
      EXPECT_LE(m.largest, limit) << at;
      EXPECT_LE(static_cast<double>(limit - m.largest), std::max(1.0, 0.10 * static_cast<double>(limit))) << at;
      FakeDevice exact{limit, {}};
      (void)find_max_batch_near(base_case(), predicted, 0, 1 << 20, std::ref(exact));
      EXPECT_LE(dev.tried.size(), exact.tried.size()) << at;
      std::vector<int64_t> sorted = dev.tried;
      std::sort(sorted.begin(), sorted.end());
      EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end()) << at;
      if (predicted <= limit && static_cast<double>(predicted) * 1.10 >= static_cast<double>(limit)) {
        EXPECT_EQ(dev.tried.size(), 2u) << at;
      }
    }
  }
}

// A fake device whose tensor peak is 1000 + 300 b and whose footprint is 5000 + 400 b bytes.
Record fake_memory_case(const Case& c) {
  Record r;
  r.name = c.descriptor();
  r.batch_size = c.batch;
  r.status = Status::ok;
  MemoryInfo m;
  m.peak_bytes = 1000 + 300 * c.batch;
  m.footprint_peak_bytes = 5000 + 400 * c.batch;
  r.memory = m;
  return r;
}

TEST(MemoryEstimate, FitsTheMeasuredBatchesAndPredictsPerSize) {
  const MemoryEstimate e = estimate_memory(base_case(), {2, 4, 8}, {13000, 100}, 16, fake_memory_case);
  ASSERT_TRUE(e.fitted) << e.failure;
  ASSERT_EQ(e.tries.size(), 3u);
  // The fit rides on the largest batch's record; the others stay plain measurements.
  EXPECT_FALSE(e.tries[0].memory->fit.has_value());
  ASSERT_TRUE(e.tries[2].memory->fit.has_value());
  const MemoryInfo& m = *e.summary.memory;
  EXPECT_EQ(e.summary.batch_size, 8);
  EXPECT_EQ(m.fixed_bytes, 1000);  // tensor line
  EXPECT_DOUBLE_EQ(m.activations_bytes_per_sample, 300.0);
  EXPECT_DOUBLE_EQ(m.fit->fixed_bytes, 5000.0);  // footprint line: the predictions' basis
  EXPECT_DOUBLE_EQ(m.fit->per_sample_bytes, 400.0);
  EXPECT_EQ(m.fit->basis, "address space");
  ASSERT_EQ(m.predictions.size(), 2u);
  EXPECT_EQ(m.predictions[0].largest_batch, 20);  // (13000 - 5000) / 400
  EXPECT_TRUE(*m.predictions[0].requested_fits);  // 16: 11400 bytes
  EXPECT_EQ(m.predictions[0].margin_bytes, 13000 - 11400);
  EXPECT_EQ(m.predictions[1].largest_batch, 0);
  EXPECT_EQ(m.requested_batch, 16);
  EXPECT_FALSE(m.assumptions.empty());
}

// A size tried under itself as a memory limit, on a fake heap that makes do with less slack near a
// limit than without one (as glibc's does, docs/memory.md): measured without a limit its footprint is
// 5000 + 400 b (fake_memory_case), under a limit L the case trains while 5000 + 300 b <= L. For 13000
// bytes the line predicts (13000 - 5000) / 400 = 20, while the batches that train under it go up to
// (13000 - 5000) / 300 = 26: the line alone is 23% low. Tried within 10%, the answer must be a batch
// that trained under it at most max(1, 10% of 26) below 26, with the batch that ran out above 26 and
// the line's 20 kept. 1000 bytes trains nothing: batch 1 runs out under it.
TEST(MemoryEstimate, ASizeTriedUnderItselfTakesWhatTrainedThere) {
  MemoryEstimate e = estimate_memory(base_case(), {2, 4, 8}, {13000, 1000, 99000}, 0, fake_memory_case);
  ASSERT_TRUE(e.fitted) << e.failure;
  const size_t fit_tries = e.tries.size();
  std::vector<std::pair<int64_t, int64_t>> runs;  // (batch, limit)
  try_under_sizes(e, base_case(), {13000, 1000}, 0.10, [&](const Case& c, int64_t limit) {
    runs.emplace_back(c.batch, limit);
    Record r = fake_memory_case(c);
    r.memory->footprint_peak_bytes = 5000 + 300 * c.batch;
    if (r.memory->footprint_peak_bytes > limit) {
      r.status = Status::oom;
      r.memory.reset();
    }
    return r;
  });
  EXPECT_TRUE(e.try_failure.empty()) << e.try_failure;
  ASSERT_EQ(e.tries.size(), fit_tries + runs.size());
  const int64_t answer = (13000 - 5000) / 300;  // 26
  for (const MemoryInfo* m : {&*e.summary.memory, &*e.tries[e.carrier].memory}) {
    ASSERT_EQ(m->predictions.size(), 3u);
    const MemoryPrediction& p = m->predictions[0];
    EXPECT_EQ(p.line_batch, 20);
    EXPECT_LE(p.trained_under_limit, answer);
    EXPECT_LE(static_cast<double>(answer - p.trained_under_limit), std::max(1.0, 0.10 * answer));
    EXPECT_GT(p.out_of_memory_under_limit, answer);
    EXPECT_EQ(p.largest_batch, p.trained_under_limit);
    EXPECT_EQ(p.largest_batch_low, p.trained_under_limit);
    EXPECT_EQ(p.largest_batch_high, p.out_of_memory_under_limit - 1);
    // 1000 bytes: not even batch 1 trains under it.
    EXPECT_EQ(m->predictions[1].largest_batch, 0);
    EXPECT_EQ(m->predictions[1].trained_under_limit, 0);
    EXPECT_EQ(m->predictions[1].out_of_memory_under_limit, 1);
    // 99000 was not among the sizes to try: the line's alone.
    EXPECT_EQ(m->predictions[2].largest_batch, (99000 - 5000) / 400);
    EXPECT_EQ(m->predictions[2].trained_under_limit, 0);
    EXPECT_EQ(m->predictions[2].out_of_memory_under_limit, 0);
    EXPECT_NE(m->assumptions.find("tried under themselves as a memory limit"), std::string::npos) << m->assumptions;
  }
  // Each try ran under its own size, the smaller size first; every try is kept.
  ASSERT_FALSE(runs.empty());
  EXPECT_EQ(runs.front().second, 1000);
  EXPECT_EQ(runs.back().second, 13000);
  const std::string printed = print_memory(e.summary);
  EXPECT_NE(printed.find("tried under it (line: 20)"), std::string::npos) << printed;
  // In a results file: the same back; a try that ran out at or below the one that trained is refused.
  EXPECT_EQ(memory_to_json(memory_from_json(memory_to_json(*e.summary.memory))), memory_to_json(*e.summary.memory));
  nlohmann::json bad = memory_to_json(*e.summary.memory);
  bad["predictions"][0]["out_of_memory_under_limit"] = e.summary.memory->predictions[0].trained_under_limit;
  EXPECT_THROW(memory_from_json(bad), std::runtime_error);
  bad = memory_to_json(*e.summary.memory);
  bad["predictions"][0]["largest_batch"] = e.summary.memory->predictions[0].line_batch;
  EXPECT_THROW(memory_from_json(bad), std::runtime_error);
}

// Under --memory-limit the measuring already ran under the size: a batch that ran out there (8) bounds
// the tries, even where a later run of it might have trained (near a limit the same batch can flip), so
// the answer never contradicts a record of the same file.
TEST(MemoryEstimate, ABatchThatRanOutUnderTheSizeWhileMeasuringBoundsTheTries) {
  const auto measured_under = [](const Case& c) {
    Record r = fake_memory_case(c);
    r.memory_limit_bytes = 13000;
    if (c.batch >= 8) {
      r.status = Status::oom;
      r.memory.reset();
    }
    return r;
  };
  MemoryEstimate e = estimate_memory(base_case(), {2, 4, 8}, {13000}, 0, measured_under);
  ASSERT_TRUE(e.fitted) << e.failure;
  std::vector<int64_t> tried;
  try_under_sizes(e, base_case(), {13000}, 0.10, [&](const Case& c, int64_t limit) {
    tried.push_back(c.batch);
    Record r = fake_memory_case(c);
    r.memory_limit_bytes = limit;
    if (c.batch > 26) r.status = Status::oom;
    return r;
  });
  for (int64_t b : tried) EXPECT_LT(b, 8);
  const MemoryPrediction& p = e.summary.memory->predictions.at(0);
  EXPECT_EQ(p.out_of_memory_under_limit, 8);
  EXPECT_GE(p.trained_under_limit, 7 - std::max<int64_t>(1, 7 / 10));
  EXPECT_LT(p.trained_under_limit, 8);
}

// An error while trying ends the trying: the size keeps the line's prediction and the failure says
// where; the tries so far are kept.
TEST(MemoryEstimate, AnErrorUnderASizeKeepsTheLinesPrediction) {
  MemoryEstimate e = estimate_memory(base_case(), {2, 4, 8}, {13000}, 0, fake_memory_case);
  ASSERT_TRUE(e.fitted) << e.failure;
  const size_t fit_tries = e.tries.size();
  try_under_sizes(e, base_case(), {13000}, 0.10, [&](const Case& c, int64_t) {
    Record r = fake_memory_case(c);
    if (c.batch > 20) {
      r.status = Status::error;
      r.error = "killed";
    }
    return r;
  });
  EXPECT_NE(e.try_failure.find("killed"), std::string::npos) << e.try_failure;
  EXPECT_EQ(e.tries.size(), fit_tries + 2);  // 20 trained, 23 failed
  EXPECT_EQ(e.summary.memory->predictions[0].largest_batch, 20);
  EXPECT_EQ(e.summary.memory->predictions[0].trained_under_limit, 0);
}

// `memory` measures near every size the machine holds: each size's predicted batch must lie within
// 4/3 of a measured batch (reach), else 3/4 of it is measured, smallest size first. On the fake line
// (footprint 5000 + 400 b) measured at 2, 4, 8: 13000 bytes predicts 20, no measured batch within
// [15, 26.7], so 15 is measured; 45000 predicts 100, none within [75, 133], so 75. Then both are near.
// With maxbatch's reach (4), 13000's 20 is within 4x of batch 8: nothing is added.
TEST(MemoryEstimate, EachHeldSizeIsPredictedFromAMeasuredBatchNearIt) {
  std::vector<int64_t> tried;
  const auto device = [&](const Case& c) {
    tried.push_back(c.batch);
    return fake_memory_case(c);
  };
  const MemoryEstimate e = estimate_memory(base_case(), {2, 4, 8}, {13000, 45000}, 0, device, {45000, 13000},
                                           std::numeric_limits<int64_t>::max(), kMemoryReach);
  ASSERT_TRUE(e.fitted) << e.failure;
  EXPECT_EQ(tried, (std::vector<int64_t>{2, 4, 8, 15, 75}));
  EXPECT_EQ(e.summary.batch_size, 75);
  EXPECT_EQ(e.summary.memory->predictions.at(0).largest_batch, 20);
  EXPECT_EQ(e.summary.memory->predictions.at(1).largest_batch, 100);
  EXPECT_NE(e.summary.memory->assumptions.find("batches 15, 75 added so that the largest batch for"), std::string::npos)
      << e.summary.memory->assumptions;
  tried.clear();
  (void)estimate_memory(base_case(), {2, 4, 8}, {13000}, 0, device, {13000});
  EXPECT_EQ(tried, (std::vector<int64_t>{2, 4, 8}));
}

// A size beyond the largest measured batch has an interval, from the same fake lines (tensors 1000 +
// 300 b, footprint 5000 + 400 b, measured at 2, 4, 8). At 13000 bytes: at most (13000 - 1000) / 300 =
// 40, where the tensors alone fill it; at least 8 + (13000 - 8200) / (2 x 300) = 16, the footprint from
// batch 8 growing twice as fast as the tensors (it grew 400/300 = 1.33x between the measured batches,
// under the assumed 2); the line's 20 within. A size within the measured batches (7000: batch 5) has
// none. A footprint that grew 3x the tensors between them (900 b) widens the lower end to that rate:
// 8 + (13000 - 12200) / 900 = 8.
TEST(MemoryEstimate, ASizeBeyondTheMeasuredBatchesHasAnInterval) {
  const MemoryEstimate e = estimate_memory(base_case(), {2, 4, 8}, {13000, 7000}, 0, fake_memory_case);
  ASSERT_TRUE(e.fitted) << e.failure;
  const MemoryInfo& m = *e.summary.memory;
  ASSERT_EQ(m.predictions.size(), 2u);
  EXPECT_EQ(m.predictions[0].largest_batch, 20);
  EXPECT_EQ(m.predictions[0].largest_batch_low, 16);
  EXPECT_EQ(m.predictions[0].largest_batch_high, 40);
  EXPECT_EQ(m.predictions[1].largest_batch, 5);
  EXPECT_EQ(m.predictions[1].largest_batch_low, 0);
  EXPECT_EQ(m.predictions[1].largest_batch_high, 0);
  EXPECT_NE(m.assumptions.find("a size beyond batch 8 has an interval"), std::string::npos) << m.assumptions;
  const std::string printed = print_memory(e.summary);
  EXPECT_NE(printed.find("16 to 40"), std::string::npos) << printed;
  EXPECT_NE(printed.find("measured"), std::string::npos) << printed;

  const MemoryEstimate steep = estimate_memory(base_case(), {2, 4, 8}, {13000}, 0, [](const Case& c) {
    Record r = fake_memory_case(c);
    r.memory->footprint_peak_bytes = 5000 + 900 * c.batch;
    return r;
  });
  ASSERT_TRUE(steep.fitted) << steep.failure;
  const MemoryPrediction& p = steep.summary.memory->predictions.at(0);
  EXPECT_EQ(p.largest_batch, 8);  // the line: (13000 - 5000) / 900 = 8, the largest measured batch: no interval
  EXPECT_EQ(p.largest_batch_high, 0);
  const MemoryEstimate steeper = estimate_memory(base_case(), {2, 4, 8}, {20000}, 0, [](const Case& c) {
    Record r = fake_memory_case(c);
    r.memory->footprint_peak_bytes = 5000 + 900 * c.batch;
    return r;
  });
  const MemoryPrediction& q = steeper.summary.memory->predictions.at(0);
  EXPECT_EQ(q.largest_batch, 16);       // (20000 - 5000) / 900
  EXPECT_EQ(q.largest_batch_low, 16);   // 8 + (20000 - 12200) / (3 x 300) = 8 + 8
  EXPECT_EQ(q.largest_batch_high, 63);  // (20000 - 1000) / 300
}

// A footprint that grows in 64000-byte steps (a heap with a top pad) while the tensors grow 300 bytes a
// sample: at batches 2, 4 and 8 it reads 64000 each time, a slope of 0 that would predict the batch cap.
// The slope is then the tensors' (300) through the largest batch: fixed 64000 - 300 * 8 = 61600, and at
// 100000 bytes the largest batch is (100000 - 61600) / 300 = 128.
TEST(MemoryEstimate, AFootprintThatGrowsInStepsTakesTheTensorsSlope) {
  const MemoryEstimate e = estimate_memory(base_case(), {2, 4, 8}, {100000}, 0, [](const Case& c) {
    Record r = fake_memory_case(c);
    r.memory->footprint_peak_bytes = 64000 * ((r.memory->footprint_peak_bytes + 63999) / 64000);
    return r;
  });
  ASSERT_TRUE(e.fitted) << e.failure;
  const MemoryInfo& m = *e.summary.memory;
  EXPECT_DOUBLE_EQ(m.fit->per_sample_bytes, 300.0);
  EXPECT_DOUBLE_EQ(m.fit->fixed_bytes, 61600.0);
  ASSERT_EQ(m.predictions.size(), 1u);
  EXPECT_EQ(m.predictions[0].largest_batch, 128);
  EXPECT_NE(m.assumptions.find("grew slower than the tensors"), std::string::npos) << m.assumptions;
  // A footprint that grows faster than the tensors (the fake device's 400 a sample) keeps its own slope.
  const MemoryEstimate plain = estimate_memory(base_case(), {2, 4, 8}, {100000}, 0, fake_memory_case);
  EXPECT_DOUBLE_EQ(plain.summary.memory->fit->per_sample_bytes, 400.0);
  EXPECT_EQ(plain.summary.memory->assumptions.find("grew slower"), std::string::npos);
}

// A model whose small batches peak on something batch-independent (its gradients: 20000 bytes) while
// its activations (a forward that leaves 400 bytes a sample live, a backward peaking at 1000 + 500 b)
// only overtake that from b = 38 on; the footprint is the tensor peak + 4000. At batches 2, 4 and 8 the
// peak reads 20000 each time: a flat line that would promise the batch cap. The forward's live bytes
// grow while the peak does not, so the estimate measures where the forward alone reaches 20000: from
// 8, doubling, 400 b >= 20000 first at b = 64, then 64 and 128, and fits on those two. The truth at
// 100000 bytes: max(20000, 1000 + 500 b) + 4000 <= 100000 up to b = 190.
TEST(MemoryEstimate, APeakHiddenBelowABatchIndependentOneIsMeasuredWhereTheActivationsRise) {
  std::vector<int64_t> tried;
  const MemoryEstimate e = estimate_memory(base_case(), {2, 4, 8}, {100000}, 0, [&](const Case& c) {
    tried.push_back(c.batch);
    Record r = fake_memory_case(c);
    r.memory->peak_bytes = std::max<int64_t>(20000, 1000 + 500 * c.batch);
    r.memory->footprint_peak_bytes = r.memory->peak_bytes + 4000;
    r.memory->forward_live_bytes = 400 * c.batch;
    return r;
  });
  ASSERT_TRUE(e.fitted) << e.failure;
  EXPECT_EQ(tried, (std::vector<int64_t>{2, 4, 8, 64, 128}));
  const MemoryInfo& m = *e.summary.memory;
  EXPECT_EQ(e.summary.batch_size, 128);
  EXPECT_EQ(m.fit->batches, (std::vector<int64_t>{64, 128}));
  EXPECT_DOUBLE_EQ(m.activations_bytes_per_sample, 500.0);
  EXPECT_DOUBLE_EQ(m.fit->per_sample_bytes, 500.0);
  ASSERT_EQ(m.predictions.size(), 1u);
  EXPECT_EQ(m.predictions[0].largest_batch, 190);
  EXPECT_NE(m.assumptions.find("at batches 2, 4, 8 the peak was batch-independent"), std::string::npos)
      << m.assumptions;
  EXPECT_EQ(m.fit->set_aside_batches, (std::vector<int64_t>{2, 4, 8}));  // the JSON field says so too
  EXPECT_NE(print_memory(e.summary).find("batches 2, 4, 8 set aside"), std::string::npos) << print_memory(e.summary);
  EXPECT_TRUE(m.fit->oom_batches.empty());
  // Where the forward's bytes grow no faster than the peak (every fake above: none), nothing is added.
  std::vector<int64_t> plain_tried;
  (void)estimate_memory(base_case(), {2, 4, 8}, {100000}, 0, [&](const Case& c) {
    plain_tried.push_back(c.batch);
    Record r = fake_memory_case(c);
    r.memory->forward_live_bytes = 250 * c.batch;  // below the peak's 300 a sample
    return r;
  });
  EXPECT_EQ(plain_tried, (std::vector<int64_t>{2, 4, 8}));
}

// A footprint that rises faster at small batches than beyond them (it bends; the heap's steps weigh
// most there): 20000 + 100 b + 900 min(b, 8) bytes. Through batches 4 and 8 (24000, 28000) the line
// rises 1000 a sample from 20000 and predicts (1000000 - 20000) / 1000 = 980 for 1000000 bytes, more
// than kMaxExtrapolation (4) times batch 8, so 3/4 of it, 735, is measured (100700 bytes). The line
// through 8 and 735 rises (100700 - 28000) / 727 = 100 a sample from 27200 and predicts
// (1000000 - 27200) / 100 = 9728, still more than 4 x 735: 3/4 of it, 7296, is measured (756800), and
// the line through 735 and 7296 (100 a sample, from 27200) predicts 9728 again, within 4 x 7296 (and
// two refinements are the most). The truth: 27200 + 100 b <= 1000000 up to b = 9728. Its tensors rise
// 50 bytes a sample (1000 + 50 b), slower than the footprint everywhere, as tensors do.
Record bent_footprint_case(const Case& c) {
  Record r = fake_memory_case(c);
  r.memory->peak_bytes = 1000 + 50 * c.batch;
  r.memory->footprint_peak_bytes = 20000 + 100 * c.batch + 900 * std::min<int64_t>(c.batch, 8);
  return r;
}

TEST(MemoryEstimate, ALineCarriedFarIsRefinedByBatchesNearerTheSizeAskedFor) {
  std::vector<int64_t> tried;
  auto device = [&](const Case& c) {
    tried.push_back(c.batch);
    return bent_footprint_case(c);
  };
  const MemoryEstimate e = estimate_memory(base_case(), {4, 8}, {1000000}, 0, device, {1000000});
  ASSERT_TRUE(e.fitted) << e.failure;
  EXPECT_EQ(tried, (std::vector<int64_t>{4, 8, 735, 7296}));
  const MemoryInfo& m = *e.summary.memory;
  EXPECT_EQ(e.summary.batch_size, 7296);
  EXPECT_EQ(m.fit->batches, (std::vector<int64_t>{4, 8, 735, 7296}));
  EXPECT_DOUBLE_EQ(m.fit->per_sample_bytes, 100.0);
  EXPECT_EQ(m.predictions.front().largest_batch, 9728);
  EXPECT_NE(
      m.assumptions.find("batches 735, 7296 added so that the largest batch for " + format_bytes(1000000) + " is read"),
      std::string::npos)
      << m.assumptions;  // both were added for the one size: it is named once
  // Batch 4 lies off that line: 24000 measured against 27200 + 100 x 4 = 27600, 15.0% of its peak; 8 is
  // on it. With four batches the printout speaks of the smaller ones.
  EXPECT_NEAR(m.fit->linearity_error, 0.15, 1e-12);
  EXPECT_NE(print_memory(e.summary).find("NOT LINEAR: the smaller batches are up to 15.0% off the line"),
            std::string::npos)
      << print_memory(e.summary);
  // Unasked (no size to refine for), the same device is measured at 4 and 8 only and predicts 980.
  tried.clear();
  const MemoryEstimate plain = estimate_memory(base_case(), {4, 8}, {1000000}, 0, device);
  EXPECT_EQ(tried, (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(plain.summary.memory->predictions.front().largest_batch, 980);
  // Asked, but the prediction is near enough: (40000 - 20000) / 1000 = 20 <= 4 x 8.
  tried.clear();
  const MemoryEstimate near = estimate_memory(base_case(), {4, 8}, {40000}, 0, device, {40000});
  EXPECT_EQ(tried, (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(near.summary.memory->predictions.front().largest_batch, 20);
}

// aim_batch: the line through the footprints of the two largest batches that trained. The device
// above at 4, 8 and 735 (and an out-of-memory try at 20000, which says nothing about the line):
// through 8 and 735, 100 a sample from 27200, so 9728 for 1000000 bytes. One batch that trained: no line.
TEST(MemoryEstimate, AimIsTheLineThroughTheTwoLargestBatchesThatTrained) {
  std::vector<Record> tries;
  auto at = [](int64_t b) {
    Case c = base_case();
    c.batch = b;
    return c;
  };
  for (int64_t b : {4, 735, 8}) tries.push_back(bent_footprint_case(at(b)));
  Record oom = bent_footprint_case(at(20000));
  oom.status = Status::oom;
  oom.memory.reset();
  tries.push_back(oom);
  EXPECT_EQ(aim_batch(tries, 1000000), 9728);
  EXPECT_EQ(aim_batch({tries[0]}, 1000000), 0);
}

// An error that is not out-of-memory says nothing about smaller batches: the estimate stops there.
TEST(MemoryEstimate, AnErrorGivesNoFit) {
  const MemoryEstimate e = estimate_memory(base_case(), {2, 4, 8}, {1 << 30}, 0, [](const Case& c) {
    Record r = fake_memory_case(c);
    if (c.batch == 4) {
      r.status = Status::error;
      r.error = "boom";
    }
    return r;
  });
  EXPECT_FALSE(e.fitted);
  EXPECT_EQ(e.tries.size(), 2u);
  EXPECT_NE(e.failure.find("batch 4: error (boom)"), std::string::npos) << e.failure;
}

// The fake memory device above under a limit on its footprint (5000 + 400 b bytes): a batch whose
// footprint exceeds `limit` runs out of memory. Records every batch tried.
struct LimitedMemoryDevice {
  int64_t limit;
  std::vector<int64_t> tried;
  Record operator()(const Case& c) {
    tried.push_back(c.batch);
    Record r = fake_memory_case(c);
    if (r.memory->footprint_peak_bytes > limit) {
      r.status = Status::oom;
      r.memory.reset();
    }
    return r;
  }
};

TEST(MemoryEstimate, ABatchOutOfMemoryIsReplacedByOneBelowIt) {
  // 5000 + 400 b <= 8000 up to b = 7: batch 8 runs out, the gap (4, 8) is bisected: 6 trains.
  LimitedMemoryDevice dev{8000, {}};
  const MemoryEstimate e = estimate_memory(base_case(), {2, 4, 8}, {13000}, 0, std::ref(dev));
  ASSERT_TRUE(e.fitted) << e.failure;
  EXPECT_EQ(dev.tried, (std::vector<int64_t>{2, 4, 8, 6}));
  ASSERT_EQ(e.tries.size(), 4u);  // every try recorded, the one out of memory too
  EXPECT_EQ(e.tries[2].status, Status::oom);
  EXPECT_EQ(e.summary.batch_size, 6);
  const MemoryFit& f = *e.summary.memory->fit;
  EXPECT_EQ(f.batches, (std::vector<int64_t>{2, 4, 6}));
  EXPECT_EQ(e.oom_batches, std::vector<int64_t>{8});
  EXPECT_EQ(f.oom_batches, std::vector<int64_t>{8});  // in the record's fit, for the results file
  EXPECT_TRUE(f.set_aside_batches.empty());
  // The record says so: its predictions rest on other batches than those asked for.
  EXPECT_NE(e.summary.memory->assumptions.find("fitted on batches 2, 4, 6 because batch 8 ran out of memory"),
            std::string::npos)
      << e.summary.memory->assumptions;
  EXPECT_FALSE(std::isnan(f.linearity_error));  // three points: the line is still checked
  EXPECT_DOUBLE_EQ(f.per_sample_bytes, 400.0);
  EXPECT_EQ(e.summary.memory->predictions.front().largest_batch, 20);  // (13000 - 5000) / 400
  // The printout says why the batches differ from those asked for.
  const std::string printed = print_memory(e.summary);
  EXPECT_NE(printed.find("batch 8 ran out of memory: fitted on the 3 smaller batches that trained"), std::string::npos)
      << printed;
}

TEST(MemoryEstimate, FewerPointsThanAskedWhenLittleTrains) {
  // Up to b = 3 fits in 6200 (5000 + 400 x 3); 4 and 8 do not: two points, no linearity check.
  LimitedMemoryDevice dev{6200, {}};
  const MemoryEstimate e = estimate_memory(base_case(), {2, 4, 8}, {13000}, 0, std::ref(dev));
  ASSERT_TRUE(e.fitted) << e.failure;
  EXPECT_EQ(dev.tried, (std::vector<int64_t>{2, 4, 3}));  // 8 is never tried once 4 ran out
  const MemoryFit& f = *e.summary.memory->fit;
  EXPECT_EQ(f.batches, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(e.oom_batches, std::vector<int64_t>{4});
  EXPECT_TRUE(std::isnan(f.linearity_error));
  EXPECT_NE(print_memory(e.summary).find("only two batches trained"), std::string::npos) << print_memory(e.summary);
}

TEST(MemoryEstimate, HalvesWhenEvenTheSmallestBatchRunsOutOfMemory) {
  // The smallest batch asked for (8) does not fit; 4 and 2 do (5000 + 400 x 5 = 7000 is the limit).
  LimitedMemoryDevice dev{7000, {}};
  const MemoryEstimate e = estimate_memory(base_case(), {8, 16}, {13000}, 0, std::ref(dev));
  ASSERT_TRUE(e.fitted) << e.failure;
  EXPECT_EQ(dev.tried, (std::vector<int64_t>{8, 4, 6, 5}));
  EXPECT_EQ(e.summary.memory->fit->batches, (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(e.oom_batches, (std::vector<int64_t>{6, 8}));
}

TEST(MemoryEstimate, OneBatchThatTrainsIsNoFitAndSaysSo) {
  LimitedMemoryDevice one{5500, {}};  // only b = 1 fits
  const MemoryEstimate e = estimate_memory(base_case(), {2, 4, 8}, {13000}, 0, std::ref(one));
  EXPECT_FALSE(e.fitted);
  EXPECT_EQ(one.tried, (std::vector<int64_t>{2, 1}));
  EXPECT_NE(e.failure.find("only batch 1 trains (batch 2 ran out of memory)"), std::string::npos) << e.failure;

  LimitedMemoryDevice none{5000, {}};  // not even b = 1
  const MemoryEstimate n = estimate_memory(base_case(), {2, 4}, {13000}, 0, std::ref(none));
  EXPECT_FALSE(n.fitted);
  EXPECT_EQ(none.tried, (std::vector<int64_t>{2, 1}));
  EXPECT_NE(n.failure.find("not even batch 1 trains"), std::string::npos) << n.failure;
}

// `trainbench maxbatch ARGS -o FILE` in a fresh directory (removed after): what it printed, its exit
// code and the results file it wrote (empty when it failed).
struct MaxBatchRun {
  test::CmdResult cmd;
  ResultsFile results;
};
MaxBatchRun run_maxbatch(const std::string& tag, const std::string& args) {
  const std::filesystem::path dir = test::temp_dir("maxbatch", tag);
  const std::filesystem::path out = dir / "mb.json";
  MaxBatchRun r;
  r.cmd = test::run_trainbench("maxbatch " + args + " -o " + out.string(), dir);
  if (r.cmd.code == 0) r.results = read_results(out.string());
  std::filesystem::remove_all(dir);
  return r;
}

// The real thing: each try in its own child under a memory limit; b trains and b+1 (<= 2b) does not.
TEST(MaxBatch, UnderAMemoryLimitFindsABatchThatTrainsWhileTwiceItDoesNot) {
  const MaxBatchRun run = run_maxbatch("limit",
                                       "--no-predict --model mobilenet_v2 --device cpu --memory-limit 700M"
                                       " --warmup 1 --min-steps 1 --min-time 0 --max-time 1");
  ASSERT_EQ(run.cmd.code, 0) << run.cmd.err;
  const ResultsFile& f = run.results;
  int64_t largest_ok = 0;
  for (const auto& r : f.benchmarks) {
    ASSERT_NE(r.status, Status::error) << r.name << ": " << r.error;
    if (r.status == Status::ok) largest_ok = std::max(largest_ok, r.batch_size);
  }
  ASSERT_GT(largest_ok, 0) << "nothing trained under the limit";
  bool next_one_ran_out = false;
  for (const auto& r : f.benchmarks) {
    if (r.status == Status::oom) {
      EXPECT_GT(r.batch_size, largest_ok) << "an OOM below a batch that trained";
    }
    if (r.status == Status::oom && r.batch_size == largest_ok + 1) next_one_ran_out = true;
  }
  EXPECT_TRUE(next_one_ran_out) << "b+1 (so also 2b) must have been tried and run out of memory";
  // The answer says which heap it holds for, and how `run` takes that heap.
  EXPECT_NE(run.cmd.out.find("train them with `trainbench run --allocator system`"), std::string::npos) << run.cmd.out;
}

// maxbatch from the prediction under a limit its fit batches (4, 8) do not both fit in: a tiny convnet
// on glibc's heap (maxbatch's default). With LibTorch 2.11 on a 2-core EPYC it grew the address space
// by 288 or 306 MiB at batch 3 (one 18 MiB heap step apart, run to run) and 380 or 405 MiB at batch 4
// without a limit (tensors 130 and 174 MiB): under 300M batch 3 ran out in 3 of 6 runs (then only 2
// trained and there was no fit), so the limit is 350M, where 2 and 3 trained and 4 ran out in 5 of 5.
// With LibTorch 1.13 under 350M, 4, 6 and 7 trained while 8 did not (4 of 4).
// The fit moves to smaller batches, the search stays below every batch that ran out of memory, and the
// answer b trains while b + 1 was tried and did not. No batch is tried twice.
TEST(MaxBatch, FromThePredictionUnderALimitTheFitBatchesDoNotFit) {
  const MaxBatchRun run =
      run_maxbatch("small",
                   "--model convnet --set channels=32 --set depth=2 --set image=224 --device cpu"
                   " --memory-limit 350M --warmup 1 --min-steps 1 --max-steps 1 --min-time 0 --max-noise 100");
  ASSERT_EQ(run.cmd.code, 0) << run.cmd.err;
  const ResultsFile& f = run.results;
  int64_t largest_ok = 0, smallest_oom = 0;
  std::vector<int64_t> tried;
  bool predicted = false;
  for (const auto& r : f.benchmarks) {
    ASSERT_NE(r.status, Status::error) << r.name << ": " << r.error;
    tried.push_back(r.batch_size);
    if (r.status == Status::ok) largest_ok = std::max(largest_ok, r.batch_size);
    if (r.status == Status::oom) smallest_oom = smallest_oom == 0 ? r.batch_size : std::min(smallest_oom, r.batch_size);
    predicted = predicted || (r.memory && !r.memory->predictions.empty());
  }
  EXPECT_TRUE(predicted) << "the fit should have found two batches that train";
  ASSERT_GT(largest_ok, 0);
  EXPECT_GT(smallest_oom, 0) << "the limit should have stopped the fit's batch 8";
  EXPECT_LE(smallest_oom, 8) << "the limit should have stopped the fit's batch 8";
  // Where the fit stood on batch 4 and one beyond it, the prediction agrees with what the search then
  // finds, within the footprint's jitter: a batch either way of each measured point, so two. Where 4 ran
  // out and the line stands on 2 and 3, one batch apart, a single 64 MiB heap step between them moves
  // it by batches: with LibTorch 2.11 on another machine under 300M, 4 ran out in 3 of 8 runs (4 and 6 trained in
  // the others), and the line through 2 and 3 then predicted 3 once and 6 twice. Only its sign is checked.
  const bool four_trained = std::any_of(f.benchmarks.begin(), f.benchmarks.end(),
                                        [](const Record& r) { return r.batch_size == 4 && r.status == Status::ok; });
  for (const auto& r : f.benchmarks) {
    if (r.memory && !r.memory->predictions.empty()) {
      const auto line = static_cast<double>(r.memory->predictions.front().largest_batch);
      if (four_trained) {
        EXPECT_NEAR(line, static_cast<double>(largest_ok), 2.0);
      } else {
        EXPECT_GE(line, 1.0);
      }
    }
  }
  EXPECT_EQ(smallest_oom, largest_ok + 1);
  std::sort(tried.begin(), tried.end());
  EXPECT_EQ(std::adjacent_find(tried.begin(), tried.end()), tried.end()) << "a batch tried twice";
}

// Under a limit that only batch 1 fits in, the fit's own tries (4 and 2 run out, 1 trains) settle the
// answer: 1, and no batch is tried again (the search does not start over from batch 1). On the fake
// line (footprint 5000 + 400 b) 5500 bytes hold batch 1 only, 5000 none: then 4, 2 and 1 run out and
// the answer is 0. (A real process's footprint near such a limit depends on the CPU's oneDNN kernels:
// under 120M batch 2 of a tiny convnet ran out on a Sapphire Rapids Xeon and trained on an EPYC.)
TEST(MaxBatch, FromThePredictionWhenTheFitsTriesBracketTheAnswerNoneIsTriedTwice) {
  for (const auto& [limit, answer] : {std::pair<int64_t, int64_t>{5500, 1}, {5000, 0}}) {
    LimitedMemoryDevice dev{limit, {}};
    int64_t predicted = -1;
    const MaxBatchResult m = find_max_batch_predicted(base_case(), limit, 1, 65536, std::ref(dev), &predicted);
    EXPECT_EQ(m.largest, answer) << limit;
    EXPECT_EQ(m.best.batch_size, answer) << limit;
    EXPECT_EQ(predicted, 0) << "no fit, no prediction";
    EXPECT_EQ(dev.tried, (std::vector<int64_t>{4, 2, 1})) << limit;
    ASSERT_EQ(m.tries.size(), 3u);
    for (const auto& r : m.tries) EXPECT_EQ(r.status, r.batch_size <= answer ? Status::ok : Status::oom);
  }
}

// The fit itself brackets the answer: 7000 bytes hold batch 5 (5000 + 400 x 5). 4 trains, 8 runs out
// and is replaced by the batch between (6, out too) and then 5, which trains: the line through 4 and 5
// predicts 5 (exactly: (7000 - 5000) / 400) and 6 ran out, so nothing more is tried.
TEST(MaxBatch, FromThePredictionWhenTheFitBracketsTheAnswerNothingMoreIsTried) {
  LimitedMemoryDevice dev{7000, {}};
  int64_t predicted = 0;
  const MaxBatchResult m = find_max_batch_predicted(base_case(), 7000, 1, 65536, std::ref(dev), &predicted);
  EXPECT_EQ(m.largest, 5);
  EXPECT_EQ(m.best.batch_size, 5);
  EXPECT_EQ(m.best.status, Status::ok);
  EXPECT_EQ(predicted, 5);
  EXPECT_FALSE(m.hit_limit);
  EXPECT_EQ(dev.tried, (std::vector<int64_t>{4, 8, 6, 5}));
}

// Far from the fit's batches the prediction is reached no faster than doubling: 45000 bytes hold batch
// 100 ((45000 - 5000) / 400). The fit (4, 8) predicts 100; the batch added to refine it is capped at
// twice 8 (16, not 3/4 of 100), the first try at twice 16 (32), the next aim (100) at 64; then 100
// trains. Going up, the least step doubles from the second aimed try on (find_max_batch_near): 102,
// which runs out, then 101, which does too. No batch twice. Below --max-batch 8 the plain search runs
// instead (no fit).
// (Seen before: 4, 8, then the --max-batch 100000 at once under a limit above the host's memory.)
TEST(MaxBatch, FromThePredictionAFarAnswerIsReachedNoFasterThanDoubling) {
  LimitedMemoryDevice dev{45000, {}};
  int64_t predicted = 0;
  const MaxBatchResult m = find_max_batch_predicted(base_case(), 45000, 1, 65536, std::ref(dev), &predicted);
  EXPECT_EQ(m.largest, 100);
  EXPECT_EQ(predicted, 100);
  EXPECT_EQ(dev.tried, (std::vector<int64_t>{4, 8, 16, 32, 64, 100, 102, 101}));
  int64_t largest_trained = 0;
  for (const auto& r : m.tries) {
    if (largest_trained > 0) {
      EXPECT_LE(r.batch_size, 2 * largest_trained) << "faster than doubling";
    }
    if (r.status == Status::ok) largest_trained = std::max(largest_trained, r.batch_size);
  }

  LimitedMemoryDevice small{45000, {}};
  const MaxBatchResult capped = find_max_batch_predicted(base_case(), 45000, 1, 6, std::ref(small), &predicted);
  EXPECT_EQ(predicted, 0);
  EXPECT_EQ(capped.largest, 6);
  EXPECT_TRUE(capped.hit_limit);
  EXPECT_EQ(small.tried, (std::vector<int64_t>{1, 2, 4, 6}));
}

// A limit below the heap the process already has mapped (1k) cannot be met by growing nothing: a
// case whose tensors (counted by trainbench's allocator) peak above the limit ran out of memory,
// whatever RLIMIT_AS saw. The tiny convnet's batch 1 holds at least a 3 x 56 x 56 float input
// (37632 bytes), so every try runs out and the answer is that not even batch 1 fits.
TEST(MaxBatch, ALimitBelowTheMappedHeapTrainsNothing) {
  const MaxBatchRun run =
      run_maxbatch("floor",
                   "--no-predict --model convnet --set channels=4 --set depth=1 --device cpu --memory-limit 1k"
                   " --warmup 1 --min-steps 1 --max-steps 1 --min-time 0 --max-noise 100");
  ASSERT_EQ(run.cmd.code, 0) << run.cmd.err;
  EXPECT_NE(run.cmd.out.find("not even batch 1 fits"), std::string::npos) << run.cmd.out;
  ASSERT_FALSE(run.results.benchmarks.empty());
  for (const auto& r : run.results.benchmarks) {
    EXPECT_EQ(r.status, Status::oom) << r.name;
    EXPECT_EQ(r.memory_limit_bytes, 1024);
  }
}

// maxbatch tries every batch here: a CPU limit above this machine's available memory (1000T) is
// refused before anything runs, pointing at `memory --fits`, which predicts without trying.
TEST(MaxBatch, ACpuLimitAboveTheMachinesMemoryIsRefused) {
  const std::filesystem::path dir = test::temp_dir("maxbatch", "above");
  const test::CmdResult r = test::run_trainbench(
      "maxbatch --model convnet --device cpu --memory-limit 1000T -o " + (dir / "mb.json").string(), dir);
  EXPECT_TRUE(test::refused(r, {"--memory-limit 1000T: more than the", "memory --fits 1000T"}));
  EXPECT_FALSE(std::filesystem::exists(dir / "mb.json"));
  std::filesystem::remove_all(dir);
}

// --max-batch bounds every try, the batches the prediction adds to refine its line included: a tiny
// bert under a limit far above what 8 sequences need (its line predicts over 100000) tries 4 and 8
// only, and 8 is the answer, marked as the limit. (Before the fix the refinement tried 333700.)
TEST(MaxBatch, NoTryAboveTheMaxBatchLimitWhenThePredictionIsFarAbove) {
  const MaxBatchRun run =
      run_maxbatch("cap",
                   "--model bert --set layers=1 --set hidden=32 --set heads=2 --set vocab=50 --set seq=16 --device cpu"
                   " --memory-limit 4G --max-batch 8 --warmup 1 --min-steps 1 --max-steps 1 --min-time 0"
                   " --max-noise 100");
  ASSERT_EQ(run.cmd.code, 0) << run.cmd.err;
  std::vector<int64_t> tried;
  for (const auto& r : run.results.benchmarks) tried.push_back(r.batch_size);
  EXPECT_EQ(tried, (std::vector<int64_t>{4, 8})) << run.cmd.out;
  EXPECT_NE(run.cmd.out.find("largest batch that trains: 8 (the --max-batch limit"), std::string::npos) << run.cmd.out;
}

}  // namespace
}  // namespace trainbench
