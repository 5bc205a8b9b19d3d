// Printers turn Records into text; nothing else. One printer per file: printer_table.cpp (console),
// printer_markdown.cpp, printer_csv.cpp, printer_json.cpp. The reporters (results/reporter.h) hand them
// the records, as cases end or from a file; `--format` names a reporter.
#pragma once
#include <string>
#include <vector>

#include "results/context.h"
#include "results/record.h"
#include "results/results_file.h"
#include "results/text_table.h"

namespace trainbench {

// Console table. The header and each row have fixed column widths so that a sweep can print the header
// once and a row as each case ends, and the lines still line up; print_table is built from the same two.
std::string table_header();              // column names and a rule line, each ending in '\n'
std::string table_row(const Record& r);  // one line ending in '\n'

// One line (ending in '\n') saying how many ok rows missed their noise target and which flag would fix
// it; "" when every row met it. The table and markdown printers end with it.
std::string noise_footer(const std::vector<Record>& records);
// One line when some rows' first measured steps were still settling (Record::still_settling); else "".
std::string settling_footer(const std::vector<Record>& records);

// Cases trained on --data: one line each (ending in '\n') with the verdict, input-bound or
// compute-bound, and its figures (printer_data.cpp); "" when no record has real data.
std::string data_verdict_line(const Record& r);
std::string data_footer(const std::vector<Record>& records);
// Under the table and markdown printers: the noise, data and MFU footers (printer_utilization.h), in order.
std::string table_footer(const std::vector<Record>& records);

// `context` may be null: then no context line is printed.
std::string print_table(const std::vector<Record>& records, const Context* context = nullptr);
std::string print_markdown(const std::vector<Record>& records, const Context* context = nullptr);
std::string print_csv(const std::vector<Record>& records);  // one header row; every scalar field
std::string print_json(const ResultsFile& file);            // the results file itself

// One cell's text, made safe for its format; shared with the compare printers.
std::string csv_quote(const std::string& s);        // RFC 4180: quoted only when it holds , " CR or LF
// A Markdown table cell or line: '|' -> "\\|", CR and LF -> ' ', '<' '>' '&' as HTML entities, '`'
// escaped, other control characters as \xNN (results/text_table.h terminal_text): text from a record is
// shown, never obeyed by a renderer or a terminal.
std::string markdown_escape(const std::string& s);

namespace detail {

// The columns shared by the table and markdown printers, and one record's cells in them. Numbers are
// rounded to 3 significant figures; oom and error rows show "-" in the measured columns.
const std::vector<TextColumn>& table_columns();
std::vector<std::string> table_cells(const Record& r);
// One line describing the machine and build: for the top of a table or a markdown report.
std::string context_summary(const Context& c);
using trainbench::display_width;  // results/text_table.h

}  // namespace detail

}  // namespace trainbench
