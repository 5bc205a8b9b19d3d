// One rule per kind of number a user gives trainbench, applied wherever the value enters: a flag
// (cli/), a suite file's [settings] and [[group]] keys (runner/suite.cpp), a case descriptor
// (cases/case.cpp), a results file's records (results/record.cpp). A rule answers "" for a good value or a short, true
// reason ("must be > 0", "must be between 0 and 1024"); the caller says where the value came from.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace trainbench {

struct NumberRule {
  double lo = 0.0, hi = 0.0;
  bool lo_exclusive = false;  // lo itself is refused ("must be > 0")
  bool integer = false;
};

// The value classes. Seconds and counts have an upper bound so that no limit can overflow a clock or a
// counter: a million seconds is eleven days.
constexpr NumberRule kSecondsPositive{0.0, 1e6, true, false};   // --max-time, --dist-timeout
constexpr NumberRule kSeconds{0.0, 1e6, false, false};          // --min-time, --timeout (0: never), --grace, --op-time
constexpr NumberRule kNoisePercent{0.0, 100.0, false, false};   // --max-noise
constexpr NumberRule kSearchPercent{0.0, 100.0, false, false};  // memory --within
constexpr NumberRule kStepCount{1.0, 1e9, false, true};         // --min-steps, --max-steps
constexpr NumberRule kWarmupSteps{0.0, 1e9, false, true};       // --warmup
constexpr NumberRule kThreadCount{0.0, 1024.0, false, true};    // --threads (0: one per core)
constexpr NumberRule kBucketMiB{0.0, 1048576.0, true, false};   // --bucket-mb (up to 1 TiB)
constexpr NumberRule kBatchSize{1.0, 1e9, false, true};         // explain --batch, maxbatch --start / --max-batch
constexpr NumberRule kGemmSize{1.0, 1e6, false, true};          // peak --gemm-size
constexpr NumberRule kProcessCount{1.0, 65536.0, false, true};  // launch --nproc, --nnodes
constexpr NumberRule kNodeRank{0.0, 65535.0, false, true};      // launch --node-rank
constexpr NumberRule kRunCount{1.0, 1e9, false, true};          // board --last
// A memory size in bytes (--memory-limit, --fits, a record's memory_limit_bytes): at most 2^60 bytes
// (1024P), since any larger would overflow a byte count.
constexpr NumberRule kMemorySizeBytes{0.0, 1152921504606846976.0, true, false};
// --max-image-pixels: a file whose header claims more pixels is skipped before anything is allocated
// (default data::kMaxImagePixels, Pillow's refusal limit); a million megapixels is far beyond any photo.
constexpr NumberRule kImagePixels{1.0, 1e12, false, true};

// A whole number written plainly: an optional '-', then digits without a leading zero ("0" itself is
// fine), nothing else, within int64. One value has one spelling, so one case has one descriptor ("08"
// and "8" would be two). "" and *out set when good, else "expected an integer" or "... leading zero".
std::string whole_number_problem(const std::string& text, int64_t* out);

// "" when `v` obeys `rule`; else "must be a finite number", "must be > 0 and at most 1000000", ...
std::string number_problem(double v, const NumberRule& rule);

// Parses the whole of `text` as a number (decimal, optional exponent) and checks it: "" and *out set
// when good, else "<text> <reason>" ("nan must be a finite number", "abc is not a number").
std::string number_text_problem(const std::string& text, const NumberRule& rule, double* out = nullptr);

// A memory size as people write it: a number with an optional binary unit, a space allowed between
// them: "8G", "16 GiB", "512M", "1.5GB", "1000" (bytes). K, M, G, T and P (with or without B or iB)
// are powers of 1024, as device makers mean them for memory; at most 1024P (2^60 bytes). "" and *bytes
// set when good, else "'<text>' is not a size like 8G, 16 GiB or 512M" or "<text> must be ...".
std::string size_text_problem(const std::string& text, int64_t* bytes = nullptr);

// A UTC date as results carry it: YYYY-MM-DD, optionally THH:MM or THH:MM:SS, optionally Z, every field
// in its calendar range (February 29 in leap years only). "" when good, else why not.
std::string utc_time_problem(const std::string& text);

// A run's start time as a results file carries it: utc_time_problem's rule, or empty (not recorded; it
// sorts as the oldest). A text that is no time would sort anywhere (`zzzz`: the latest for ever).
std::string start_time_problem(const std::string& text);

// A host name as a results file carries it (the machine a run is filed under): at most 255 bytes of
// printable ASCII, none of them a space, '/', '\\', '<', '>', '&', '"', '\'', '`' or '|': what a
// terminal, a Markdown or HTML page and a board label HOST/DEVICE show as the characters they are.
// Empty: not recorded.
std::string host_name_problem(const std::string& text);

// Thrown for bad user input: one line naming the bad value. The CLI exits 2 on it.
class InputError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// The parsers of plain values, used wherever such a value enters (flags, suite files): each throws
// InputError naming `what` (the flag or key) and the bad text.
// "16,32,64" style lists: items trimmed, an empty item refused.
std::vector<std::string> split_list(const std::string& text, const std::string& what);
// A list of integers > 0.
std::vector<int64_t> parse_int_list(const std::string& text, const std::string& what);
// The number `text` as `rule` allows it: "<what>: <text> <reason>".
double checked_number(const std::string& text, const NumberRule& rule, const std::string& what);
// A size like 4G, 512M, 1.5GiB or 1000000 (bytes), by size_text_problem's rule.
int64_t parse_size(const std::string& text, const std::string& what);

}  // namespace trainbench
