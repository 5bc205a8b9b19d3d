// `trainbench board`: the study's table from the results store, across machines and with history
// (docs/board.md). Reads the store only; runs in the torch-free program, which hands a board with
// --predict to the LibTorch one (its predicted columns build each row's model).
#include <iostream>

#include <fmt/format.h>

#include "board/board.h"
#include "cli/board.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/shared_flags.h"
#include "cli/store_flags.h"
#include "core/value_rules.h"
#include "report/html_report.h"

namespace trainbench::cli {

namespace {

BoardPredictor predictor = nullptr;

struct BoardFlags {
  StoreFlags store;
  std::string baseline, query, format, output;
  std::string predict;  // catalogue ids: a predicted column each
  int64_t last = 20;
};

// --format, or the output's extension (.html, .md, .csv, .json), else md.
std::string board_format(const BoardFlags& o) {
  if (!o.format.empty()) {
    if (o.format == "html" || o.format == "md" || o.format == "markdown" || o.format == "csv" || o.format == "json") {
      return o.format == "markdown" ? "md" : o.format;
    }
    throw InputError("--format: unknown format '" + o.format + "' (known: html, md, csv, json)");
  }
  for (const char* ext : {"html", "md", "csv", "json"}) {
    const std::string dot = std::string(".") + ext;
    if (o.output.size() > dot.size() && o.output.compare(o.output.size() - dot.size(), dot.size(), dot) == 0) return ext;
  }
  return "md";
}

int cmd_board(const BoardFlags& o) {
  const std::string format = board_format(o);
  if (format == "html" && o.output.empty()) throw InputError("board: the HTML page needs -o FILE.html");
  if (format == "html") find_chartjs();  // ReportError now, before the store is read
  const std::vector<predict::DeviceSpec> cards =
      o.predict.empty()
          ? std::vector<predict::DeviceSpec>{}
          : predict::select_devices(predict::builtin_catalogue(), split_list(o.predict, "--predict"), "--predict");
  // Predicting a row builds its model to count its layers: the LibTorch program's part.
  if (!cards.empty() && predictor == nullptr) return kHandOver;
  if (!o.output.empty()) check_output(o.output, "-o", {}, o.store.spec());
  const auto store = open_or_refuse(o.store.spec(), "board");
  BoardOptions bo;
  bo.baseline = o.baseline;
  bo.last = o.last;
  bo.query = o.query.rfind("store:", 0) == 0 ? o.query.substr(6) : o.query;
  Board b;
  try {
    b = build_board(*store, bo);
  } catch (const StoreError& e) {
    return bad_input(e.what());
  }
  if (!cards.empty()) predictor(b, cards);
  std::string text;
  if (format == "html") text = board_html(b, read_chartjs());
  if (format == "md") text = board_markdown(b);
  if (format == "csv") text = board_csv(b);
  if (format == "json") text = board_json(b);
  if (o.output.empty()) {
    std::cout << text;
    return kExitOk;
  }
  try {
    write_page(text, o.output);
  } catch (const ReportError& e) {
    return bad_input(e.what());
  }
  std::cerr << fmt::format("board: {} ({} column(s), {} case(s))\n", o.output, b.columns.size(), b.rows.size());
  return kExitOk;
}

}  // namespace

void set_board_predictor(BoardPredictor p) { predictor = p; }

Command add_board(CLI::App& app) {
  auto o = std::make_shared<BoardFlags>();
  CLI::App* sub = app.add_subcommand(
      "board", "The study's table from the results store: cases by machine and device, speed-ups, history (docs/board.md)");
  o->store.add_to(*sub, false);
  sub->add_option("query", o->query, "Which runs at all, e.g. machine=gpu-box,since=2026-11-01 (docs/store.md)");
  sub->add_option("--baseline", o->baseline, "The column speed-ups are against: a device (cpu, cuda:0), a device name or HOST/DEVICE (default: the first column)");
  sub->add_option("--last", o->last, "Each machine's and device's latest N runs (default 20)")->check(rule(kRunCount));
  sub->add_option("--predict", o->predict,
                  "Catalogue ids: a predicted column per card beside the measured ones (`trainbench devices`; "
                  "docs/prediction.md)");
  add_format(*sub, o->format, "html, md, csv or json (default: from -o's extension, else md)");
  add_output(*sub, o->output, "The file to write (default: stdout; html needs one)");
  return {sub, [o] { return cmd_board(*o); }};
}

}  // namespace trainbench::cli
