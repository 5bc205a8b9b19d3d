// Numbers as text: for people (three significant figures, byte sizes in binary units) and for machines
// (every digit, for CSV cells).
#pragma once
#include <cstdint>
#include <string>

namespace trainbench {

// 12345 -> "12300", 3.14159 -> "3.14", 0.0012345 -> "0.00123", 0 -> "0"; non-finite -> "-";
// |x| >= 1e15 or < 1e-6 in scientific notation: 1.23e+20, 4.56e-09.
std::string format_significant(double x, int digits = 3);
// 512 -> "512 B", 1536 -> "1.50 KiB", 3 << 30 -> "3.00 GiB"; negative (unknown) -> "-".
std::string format_bytes(int64_t bytes);
// A size as people write it: a whole number of a binary unit when it is one (8 << 30 -> "8 GiB",
// 512 << 20 -> "512 MiB"), else format_bytes.
std::string format_size(int64_t bytes);
// Every digit needed to read the same double back (the shortest round-trip form: 0.1 -> "0.1",
// 1e300 -> "1e+300"); "" for NaN and infinity, an empty cell. For the CSV printers.
std::string format_round_trip(double x);

}  // namespace trainbench
