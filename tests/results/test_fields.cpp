// The field tables (results/fields.h) against docs/json-schema.md and the published CSV header, and
// how they read older files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/fields.h"
#include "results/printer.h"
#include "schema_doc.h"

namespace trainbench {
namespace {

template <class T>
std::set<std::string> keys_of(const std::vector<detail::Field<T>>& fields, const std::string& prefix = "") {
  const auto keys = detail::field_keys(fields, prefix);
  return {keys.begin(), keys.end()};
}

// Every key the tables read and write is documented, and every documented key has a table entry.
TEST(FieldTables, KeysAreTheKeysDocumentedInJsonSchemaMd) {
  std::set<std::string> record = keys_of(record_fields());
  for (const auto& k : keys_of(summary_fields(), "step_time_s.")) record.insert(k);
  for (const auto& k : keys_of(dist_fields(), "dist.")) record.insert(k);
  for (const auto& k : keys_of(data_fields(), "data.")) record.insert(k);
  for (const auto& k : keys_of(memory_fields(), "memory.")) record.insert(k);
  for (const auto& k : keys_of(prediction_field_table(), "prediction.")) record.insert(k);
  EXPECT_EQ(documented_keys("benchmarks[]"), record);
  EXPECT_EQ(documented_keys("context"), keys_of(context_fields()));
  // One entry per key.
  EXPECT_EQ(keys_of(record_fields()).size(), detail::field_keys(record_fields()).size());
  EXPECT_EQ(keys_of(context_fields()).size(), detail::field_keys(context_fields()).size());
}

// The CSV header is a contract with users' scripts: these are the columns, in this order, that
// trainbench 0.1.0 wrote (commit 0d6fc0c, before the columns came from the field table).
TEST(FieldTables, CsvHeaderIsThePublishedOne) {
  const std::string published =
      "name,model,params,batch_size,device,precision,layout,optimizer,forward_only,threads,status,error,"
      "throughput,unit,tokens_per_s,step_time_median_s,step_time_mean_s,step_time_stddev_s,step_time_min_s,"
      "step_time_max_s,step_time_jitter_s,step_time_n,warmup_steps,warmup_time_s,stop_reason,flops_per_step,"
      "achieved_gflops,percent_of_peak,parameters,peak_memory_bytes,wall_time_s,peak_reserved_bytes,tf32,"
      "algorithm_search,skipped_steps,loss_scale,mean_sm_clock_mhz,throttled_samples,step_time_median_noise,"
      "step_time_lag1_autocorrelation,noise_target,noise_target_met,energy_j_per_sample,mean_power_w,"
      "energy_source,data_source,data_wait_share,data_verdict,model_flops_per_step,hardware_flops_per_step,mfu,"
      "hfu,memory_peak_bytes,memory_parameters_bytes,memory_gradients_bytes,memory_optimizer_bytes,"
      "memory_fixed_bytes,memory_activations_bytes_per_sample,memory_max_rss_bytes,data_median_copy_s,"
      "data_transfer,model_file_bytes,model_file_sha256,still_settling,memory_limit_bytes\n";
  EXPECT_EQ(print_csv({}), published);
  // Every column has a cell: a default record's row has as many cells as the header has names.
  const std::string csv = print_csv({Record{}});
  const std::string row = csv.substr(published.size());
  EXPECT_EQ(std::count(row.begin(), row.end(), ','), std::count(published.begin(), published.end(), ','));
}

// A key added after schema 1 shipped reads as the struct's default when absent; one that every file
// has is refused when absent, naming it.
TEST(FieldTables, OlderFilesReadAsTheDefaultsAndMissingRequiredKeysAreNamed) {
  Record r;
  r.name = "resnet18:b2:fp32:nchw:cpu";
  r.device = "cpu";
  r.tf32 = "on";
  r.loss_scale = 1024.0;
  nlohmann::json j = to_json(r);
  j.erase("tf32");
  j.erase("loss_scale");
  j["step_time_s"].erase("median_noise");  // added later; its struct default is 0, a missing key is NaN
  const Record back = record_from_json(j);
  EXPECT_EQ(back.tf32, "n/a");
  EXPECT_TRUE(std::isnan(back.loss_scale));
  EXPECT_TRUE(std::isnan(back.step_time_s.median_noise));
  j.erase("unit");
  try {
    (void)record_from_json(j);
    ADD_FAILURE() << "a record without unit was read";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "field \"unit\": missing");
  }
}

// The fit's lists of batches left off its line travel through the results file; a fit written before
// they existed reads them as empty.
TEST(FieldTables, AFitsOutOfMemoryAndSetAsideBatchesRoundTripAndOlderFitsReadEmpty) {
  MemoryInfo m;
  m.source = "counting allocator";
  MemoryFit f;
  f.basis = "address space";
  f.batches = {32, 64};
  f.peaks = {1000, 2000};
  f.oom_batches = {128, 256};
  f.set_aside_batches = {4, 8};
  m.fit = f;
  nlohmann::json j = memory_to_json(m);
  EXPECT_EQ(j["fit"]["oom_batches"], nlohmann::json({128, 256}));
  const MemoryInfo back = memory_from_json(j);
  EXPECT_EQ(back.fit->oom_batches, f.oom_batches);
  EXPECT_EQ(back.fit->set_aside_batches, f.set_aside_batches);
  j["fit"].erase("oom_batches");
  j["fit"].erase("set_aside_batches");
  const MemoryInfo old = memory_from_json(j);
  EXPECT_TRUE(old.fit->oom_batches.empty());
  EXPECT_TRUE(old.fit->set_aside_batches.empty());
  EXPECT_EQ(old.fit->batches, f.batches);
}

}  // namespace
}  // namespace trainbench
