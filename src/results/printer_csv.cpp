// CSV: one header row, then one row per record with every scalar field (raw step times are left out).
// Quoting follows RFC 4180; lines end in '\n'. Numbers are written in full (shortest round-trip form).
#include "results/fields.h"
#include "results/printer.h"

namespace trainbench {

std::string csv_quote(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

namespace {

void append_row(std::string& out, const std::vector<std::string>& cells) {
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i) out += ',';
    out += csv_quote(cells[i]);
  }
  out += '\n';
}

}  // namespace

// The columns and their order come from the Record's field table (results/record_fields.cpp).
std::string print_csv(const std::vector<Record>& records) {
  std::vector<std::string> header;
  for (const auto& f : record_fields())
    if (f.column) header.emplace_back(f.column);
  std::string out;
  append_row(out, header);
  for (const auto& r : records) {
    std::vector<std::string> cells;
    cells.reserve(header.size());
    for (const auto& f : record_fields())
      if (f.column) cells.push_back(f.cell(r));
    append_row(out, cells);
  }
  return out;
}

}  // namespace trainbench
