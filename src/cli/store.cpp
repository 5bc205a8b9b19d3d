// The results store on the command line: --store/--no-store on the measuring commands (each run kept
// when it ends), store: inputs for compare and report, and `trainbench store` (import, export, list,
// show, rm, push). docs/store.md.
#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/shared_flags.h"
#include "cli/store_flags.h"
#include "core/subprocess.h"
#include "core/value_rules.h"
#include "results/printer.h"
#include "results/text_table.h"
#include "store/store.h"

namespace trainbench::cli {

namespace {

std::string short_hash(const std::string& h) { return h.substr(0, 12); }

std::string run_label(const StoredRun& r) { return fmt::format("store:run={}", r.id); }

// "; it completes run 4 (interrupted), which it replaces" when a resumed run took an older one's place.
std::string completes(const Store::Added& a) {
  if (a.within) return " (an interrupted part of it: every case is in that run, which completes it)";
  if (a.replaced.empty()) return "";
  std::string ids;
  for (const int64_t id : a.replaced) ids += (ids.empty() ? "" : ", ") + std::to_string(id);
  return fmt::format("; it completes run {} (interrupted), which it replaces", ids);
}

}  // namespace

std::unique_ptr<Store> open_or_refuse(const StoreSpec& spec, const std::string& why_needed) {
  if (spec.kind == StoreSpec::Kind::none) {
    throw InputError(why_needed + " needs a store, and none is chosen (--store, TRAINBENCH_STORE, or HOME unset)");
  }
  try {
    return Store::open(spec);
  } catch (const StoreError& e) {
    throw InputError(e.what());
  }
}

void StoreFlags::add_to(CLI::App& app, bool measuring) {
  app.add_option_function<std::string>(
      "--store",
      [this](const std::string& v) {
        store = v;
        given = true;
      },
      "Results store: a file path, postgresql://URL or none (default: TRAINBENCH_STORE, else "
      "$XDG_DATA_HOME/trainbench/results.sqlite)");
  if (measuring) app.add_flag("--no-store", no_store, "Keep this run in no store (the results file only)");
}

StoreSpec StoreFlags::spec() const {
  if (given && store.empty()) return parse_store_spec(store, "--store");  // refused: an empty name
  return choose_store(store, no_store);
}

StoreSpec check_store(const StoreFlags& flags) {
  const StoreSpec spec = flags.spec();
  if (spec.kind != StoreSpec::Kind::none) open_or_refuse(spec, "");
  return spec;
}

int keep_in_store(const StoreSpec& spec, const ResultsFile& results, const std::string& results_path, int code) {
  if (spec.kind == StoreSpec::Kind::none) return code;
  try {
    const auto store = Store::open(spec);
    const Store::Added a = store->add(results);
    std::cerr << fmt::format("{} as run {} in {}{}\n", a.added ? "stored" : "already stored", a.id, store->name(),
                             completes(a));
    return code;
  } catch (const StoreInterrupted& e) {
    std::cerr << "trainbench: error: " << e.what() << "; the results are in " << results_path << std::endl;
    return interrupt_exit_code();
  } catch (const StoreError& e) {
    std::cerr << "trainbench: error: " << e.what() << "; the results are in " << results_path << std::endl;
    return code == kExitOk || code == kExitFailure ? kExitBadInput : code;
  }
}

std::vector<Input> read_inputs(const std::vector<std::string>& inputs, const StoreFlags& store_flags) {
  std::vector<Input> out;
  std::unique_ptr<Store> store;
  for (const auto& in : inputs) {
    if (in.rfind("store:", 0) != 0) {
      out.push_back({in, read_results(in)});
      continue;
    }
    const RunQuery q = parse_run_query(in.substr(6));
    if (!store) store = open_or_refuse(store_flags.spec(), "'" + in + "'");
    try {
      const auto runs = store->runs(q);
      if (runs.empty()) throw InputError("'" + in + "' matches no run in " + store->name());
      for (const auto& r : runs) out.push_back({run_label(r), store->load(r.id)});
    } catch (const StoreError& e) {
      throw InputError(e.what());
    }
  }
  return out;
}

namespace {

struct StoreOptions {
  std::vector<std::string> files;  // import
  std::vector<std::string> runs;   // export, show, rm
  std::string query;               // list, push
  std::string output, dir;         // export
  std::string format = "table";    // list
  std::string to;                  // push
  StoreFlags flags;
};

// list's and push's QUERY, written with or without the store: of compare's inputs.
RunQuery query_of(const std::string& text) {
  return parse_run_query(text.rfind("store:", 0) == 0 ? text.substr(6) : text);
}

std::unique_ptr<Store> chosen(const StoreOptions& o) { return open_or_refuse(o.flags.spec(), "trainbench store"); }

int store_import(const StoreOptions& o) {
  std::vector<ResultsFile> files;
  for (const auto& f : o.files) files.push_back(read_results(f));  // every file checked before any is added
  const auto store = chosen(o);
  install_interrupt_handlers();  // Ctrl-C ends a wait for another writer, or stops between runs
  int added = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    if (interrupt_requested()) throw StoreInterrupted(store->name() + ": interrupted before " + o.files[i]);
    const Store::Added a = store->add(files[i]);
    added += a.added ? 1 : 0;
    std::cout << fmt::format("{}: {} as run {}{}\n", o.files[i], a.added ? "stored" : "already stored", a.id,
                             completes(a));
  }
  std::cerr << fmt::format("{} of {} run(s) added to {}\n", added, files.size(), store->name());
  return kExitOk;
}

int store_export(const StoreOptions& o) {
  const auto store = chosen(o);
  if (o.runs.size() > 1 && o.dir.empty()) throw InputError("store export: several runs need --dir DIR, not -o");
  if (!o.output.empty() && !o.dir.empty()) throw InputError("store export: give -o FILE or --dir DIR, not both");
  std::vector<StoredRun> runs;
  for (const auto& ref : o.runs) runs.push_back(store->find(ref));
  if (!o.dir.empty()) std::filesystem::create_directories(o.dir);
  for (const auto& r : runs) {
    const ResultsFile f = store->load(r.id);
    if (o.output.empty() && o.dir.empty()) {
      std::cout << results_to_string(f) << std::flush;
      continue;
    }
    const std::string path =
        o.dir.empty() ? o.output : (std::filesystem::path(o.dir) / fmt::format("run-{}.json", r.id)).string();
    check_output(path, o.dir.empty() ? "-o" : "--dir", {}, o.flags.spec());
    write_results_atomic(path, f);
    std::cerr << fmt::format("run {}: {}\n", r.id, path);
  }
  return kExitOk;
}

std::string store_list_text(const std::vector<StoredRun>& runs) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : runs) {
    rows.push_back({std::to_string(r.id), r.start_time, r.hostname, r.device, r.device_name, r.libtorch_version,
                    r.trainbench_version + " " + r.git_revision, fmt::format("{}/{}", r.ok_cases, r.cases),
                    short_hash(r.hash)});
  }
  return fitted_table({{"run", 0, true},
                       {"started (UTC)"},
                       {"machine"},
                       {"device"},
                       {"device name"},
                       {"LibTorch"},
                       {"trainbench"},
                       {"ok/cases", 0, true},
                       {"hash"}},
                      rows);
}

int store_list(const StoreOptions& o) {
  if (o.format != "table" && o.format != "json") throw InputError("--format: '" + o.format + "' is not table or json");
  const RunQuery q = query_of(o.query);
  const auto store = chosen(o);
  const auto runs = store->runs(q);
  if (runs.empty() && !o.query.empty()) throw InputError("'" + o.query + "' matches no run in " + store->name());
  if (o.format == "json") {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& r : runs) {
      j.push_back({{"run", r.id}, {"hash", r.hash}, {"stored_at", r.stored_at}, {"start_time", r.start_time},
                   {"machine", r.hostname}, {"device", r.device}, {"device_name", r.device_name},
                   {"libtorch_version", r.libtorch_version}, {"trainbench_version", r.trainbench_version},
                   {"git_revision", r.git_revision}, {"cases", r.cases}, {"ok_cases", r.ok_cases}});
    }
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << store_list_text(runs);
    std::cerr << fmt::format("{} run(s) in {}\n", runs.size(), store->name());
  }
  return kExitOk;
}

int store_show(const StoreOptions& o) {
  const auto store = chosen(o);
  for (const auto& ref : o.runs) {
    const StoredRun r = store->find(ref);
    const ResultsFile f = store->load(r.id);
    std::cout << fmt::format("run {} (hash {}), stored {}\n", r.id, r.hash, r.stored_at)
              << print_table(f.benchmarks, &f.context) << "\n";
  }
  return kExitOk;
}

int store_rm(const StoreOptions& o) {
  const auto store = chosen(o);
  std::vector<StoredRun> runs;
  for (const auto& ref : o.runs) runs.push_back(store->find(ref));  // every name checked before any is removed
  for (const auto& r : runs) {
    if (store->remove(r.id)) std::cerr << fmt::format("removed run {} ({} cases)\n", r.id, r.cases);
  }
  return kExitOk;
}

int store_push(const StoreOptions& o) {
  const StoreSpec to = parse_store_spec(o.to, "--to");
  if (to.kind == StoreSpec::Kind::none) throw InputError("--to: none is not a store to push to");
  const RunQuery q = query_of(o.query);
  const auto from = chosen(o);
  const auto target = open_or_refuse(to, "--to");
  int added = 0;
  const auto runs = from->runs(q);
  if (runs.empty() && !o.query.empty()) throw InputError("'" + o.query + "' matches no run in " + from->name());
  install_interrupt_handlers();  // Ctrl-C ends a wait for another writer, or stops between runs
  for (const auto& r : runs) {
    if (interrupt_requested()) {
      throw StoreInterrupted(target->name() + ": interrupted before run " + std::to_string(r.id) + " (" +
                             std::to_string(added) + " added)");
    }
    added += target->add(from->load(r.id)).added ? 1 : 0;  // a transaction each
  }
  std::cerr << fmt::format("pushed {} run(s) from {} to {}: {} added, {} there already\n", runs.size(), from->name(),
                           target->name(), added, runs.size() - static_cast<size_t>(added));
  return kExitOk;
}

int run_store_action(int (*action)(const StoreOptions&), const StoreOptions& o) {
  try {
    return action(o);
  } catch (const StoreInterrupted& e) {
    std::cerr << "trainbench: error: " << e.what() << std::endl;
    return interrupt_exit_code();
  } catch (const StoreError& e) {
    return bad_input(e.what());
  } catch (const ResultsError& e) {
    return bad_input(e.what());
  }
}

}  // namespace

Command add_store(CLI::App& app) {
  auto o = std::make_shared<StoreOptions>();
  auto action = std::make_shared<int (*)(const StoreOptions&)>(nullptr);
  CLI::App* sub = app.add_subcommand("store", "The results store: import, export, list, show, rm, push (docs/store.md)");
  sub->require_subcommand(1);
  sub->fallthrough();  // `store list --store PATH`: the verb's unknown flags go to `store`
  o->flags.add_to(*sub, false);
  auto verb = [&](const char* name, const char* help, int (*fn)(const StoreOptions&)) {
    CLI::App* v = sub->add_subcommand(name, help);
    v->callback([action, fn] { *action = fn; });
    return v;
  };
  verb("import", "Add results files (each once: a file added twice is stored once)", store_import)
      ->add_option("files", o->files, "FILE.json ...")
      ->required();
  CLI::App* ex = verb("export", "Write runs back as results files (for compare and report)", store_export);
  ex->add_option("runs", o->runs, "RUN ... (an id, or 6+ hex digits of a hash)")->required();
  add_output(*ex, o->output, "The results file (default: stdout)");
  ex->add_option("--dir", o->dir, "Write each run to DIR/run-<id>.json");
  CLI::App* ls = verb("list", "The runs: when, machine, device, LibTorch, cases", store_list);
  ls->add_option("query", o->query, "Which runs, e.g. device=cuda,last=5 (docs/store.md)");
  add_format(*ls, o->format, "table or json");
  verb("show", "A run's context and cases", store_show)->add_option("runs", o->runs, "RUN ...")->required();
  verb("rm", "Remove runs", store_rm)->add_option("runs", o->runs, "RUN ...")->required();
  CLI::App* push = verb("push", "Copy runs to another store (each once), e.g. a team's PostgreSQL", store_push);
  push->add_option("--to", o->to, "The store to copy to (a path or postgresql://URL)")->required();
  push->add_option("query", o->query, "Which runs (default: every run)");
  return {sub, [o, action] { return run_store_action(*action, *o); }};
}

}  // namespace trainbench::cli
