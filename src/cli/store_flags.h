// The results store on the command line, without LibTorch: --store/--no-store (one flag group, one
// representation), opening the chosen store, keeping a run in it, compare's store: inputs, and the
// checks of every command's output.
// cli/store.cpp defines them; the torch-free program (cli/front.cpp) runs `trainbench store` with them.
#pragma once
#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

#include "results/results_file.h"
#include "store/store.h"

namespace trainbench::cli {

// --store and --no-store (docs/store.md): where a run is kept when it ends.
struct StoreFlags {
  std::string store;   // empty: TRAINBENCH_STORE, else the default file
  bool given = false;  // --store was given (an empty --store '' is refused, not the default)
  bool no_store = false;

  // `measuring`: run, memory and maxbatch also take --no-store.
  void add_to(CLI::App& app, bool measuring = true);
  // choose_store's rule; throws InputError.
  StoreSpec spec() const;
};

// The store a measuring command keeps its run in, opened once before anything runs (created or
// migrated) so that a bad one is refused now, not after the run; none with --no-store. Throws InputError.
StoreSpec check_store(const StoreFlags& flags);
// The store a reading command (store, board, store: inputs) asked for, open: InputError (one line, exit 2)
// when it cannot be opened or none is chosen; `why_needed` names the command in that line.
std::unique_ptr<Store> open_or_refuse(const StoreSpec& spec, const std::string& why_needed);
// Adds the results just written to `results_path` to the store and says so on stderr; `code` is the
// command's exit code so far. A store that fails now: one line naming it and the results file, and
// exit 2 (the results file holds everything measured).
int keep_in_store(const StoreSpec& spec, const ResultsFile& results, const std::string& results_path, int code);
// What compare and report read: results files, and store:QUERY (docs/store.md), which gives every
// run it matches, oldest first, labelled store:run=ID. Throws InputError or ResultsError.
struct Input {
  std::string label;
  ResultsFile file;
};
std::vector<Input> read_inputs(const std::vector<std::string>& inputs, const StoreFlags& store_flags);

// Outputs (cli/outputs.cpp).
// Throws InputError (before anything runs) when `output` could not be written, or is an SQLite
// database (a store, whichever) or its -wal, -shm or -journal, naming `output` as given (and the flag,
// when `flag` is not empty).
void check_writable(const std::string& output, const std::string& flag = "");
// Throws InputError when `output` is the same file as one of `inputs` (symlinks, hard links and
// spellings such as ./ resolved): writing it would destroy an input. Empty inputs are skipped.
void check_not_an_input(const std::string& output, const std::string& output_flag,
                        const std::vector<std::string>& inputs);
// The store a command without --store would keep a run in (TRAINBENCH_STORE, else the default file;
// none when that is unset or not a store): its output must not be it either.
StoreSpec default_store_or_none();
// compare's and report's store: the one `store_flags` choose, none when no input is a store: query
// (a bad --store is then refused where the query reads it).
StoreSpec store_of_inputs(const std::vector<std::string>& inputs, const StoreFlags& store_flags);
// The files of a store that no output may be: an SQLite store's file, -wal, -shm and -journal.
std::vector<std::string> store_files(const StoreSpec& spec);
// Every check of an output, before anything runs: writable, not an SQLite database or a file beside
// one (check_writable), and not one of `inputs` or `store`'s files.
void check_output(const std::string& output, const std::string& flag, const std::vector<std::string>& inputs,
                  const StoreSpec& store);

}  // namespace trainbench::cli
