// What both stores' wait tests check (test_store.cpp: SQLite, test_store_pg.cpp: PostgreSQL), with
// another connection holding the store's write lock throughout: an add waits at most store_wait()'s
// 1.5 s here and says so once after a second, and an interrupt 0.2 s into a wait of up to 60 s ends it
// then, as StoreInterrupted. store_wait() is as it was afterwards.
#pragma once
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "results/results_file.h"
#include "store/sql.h"
#include "store/store.h"

namespace trainbench::test {

inline void expect_bounded_said_interruptible_wait(Store& store, const ResultsFile& f) {
  const StoreWait before = store_wait();
  using Clock = std::chrono::steady_clock;
  std::vector<std::string> said;
  set_store_wait({1500, nullptr, [&](const std::string& what) { said.push_back(what); }});
  auto t0 = Clock::now();
  try {
    (void)store.add(f);
    ADD_FAILURE() << "added while another connection held the write lock";
  } catch (const StoreInterrupted& e) {
    ADD_FAILURE() << "not interrupted: " << e.what();
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("still busy with another process's write after 1.5 s"), std::string::npos)
        << e.what();
  }
  const double waited = std::chrono::duration<double>(Clock::now() - t0).count();
  EXPECT_GE(waited, 1.4);
  EXPECT_LT(waited, 10.0);
  EXPECT_EQ(said.size(), 1u);
  if (!said.empty()) {
    EXPECT_NE(said[0].find("waiting for " + store.name() + ": another process is writing to it (up to 1.5 s"),
              std::string::npos)
        << said[0];
  }
  t0 = Clock::now();
  set_store_wait({60000, [&] { return Clock::now() - t0 > std::chrono::milliseconds(200); }, nullptr});
  EXPECT_THROW((void)store.add(f), StoreInterrupted);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 2.0);
  set_store_wait(before);
}

}  // namespace trainbench::test
