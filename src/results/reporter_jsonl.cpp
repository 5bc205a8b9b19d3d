// JSON lines (--format jsonl), for piping into `jq`: the first line is {"context": {...}, "schema_version": N},
// then one line per case as it ends, each the record's JSON exactly as the results file holds it
// (compact, one object per line). Cases measured before a --resume are in the results file only.
#include <ostream>

#include <nlohmann/json.hpp>

#include "results/reporter.h"

namespace trainbench {

namespace {

class JsonlReporter final : public Reporter {
 public:
  explicit JsonlReporter(std::ostream& out) : out_(out) {}
  void begin(const Context& context, Feed) override {
    const nlohmann::json first = {{"schema_version", kResultsSchemaVersion}, {"context", to_json(context)}};
    out_ << first.dump() << '\n' << std::flush;
  }
  void record(const Record& r) override { out_ << to_json(r).dump() << '\n' << std::flush; }

 private:
  std::ostream& out_;
};

}  // namespace

std::unique_ptr<Reporter> make_jsonl_reporter(std::ostream& out) { return std::make_unique<JsonlReporter>(out); }

}  // namespace trainbench
