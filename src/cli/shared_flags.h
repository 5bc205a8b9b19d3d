// The flags several subcommands share, each declared here once: its names, its help (the allowed values
// taken from the one table that defines them: precisions, layouts, devices) and its checks. A subcommand
// takes one with a call (add_precision(*sub, o->precision, Many::one)); what differs between subcommands
// (one value or a comma list, what -o writes) is an argument, never a second declaration. The test
// tests/cli/test_flag_table.cpp lists every subcommand's flags and fails on a flag declared twice.
#pragma once
#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/stopping.h"
#include "core/value_rules.h"

namespace trainbench::cli {

// A CLI11 check applying `r` (core/value_rules.h) to a flag's value: "--max-time: nan must be a finite number".
CLI::Validator rule(const NumberRule& r);

// One value, or a comma-separated list (a sweep axis).
enum class Many { one, list };

// --precision: every precision (fp32, fp16, bf16, fp16-pure, bf16-pure), or the types they compute in
// (fp32, fp16, bf16: what peak measures and a loader's batch takes).
enum class PrecisionSet { precisions, compute_types };
// `applies_to` (may be empty) starts the help: "Images: the batch's dtype".
CLI::Option* add_precision(CLI::App& app, std::string& to, Many many, PrecisionSet set = PrecisionSet::precisions,
                           const std::string& applies_to = "");
CLI::Option* add_layout(CLI::App& app, std::string& to, Many many, const std::string& applies_to = "");
CLI::Option* add_device(CLI::App& app, std::string& to, Many many);
CLI::Option* add_optimizer(CLI::App& app, std::string& to, Many many);
// --model: one workload, or a sweep's comma list (which may be one TorchScript file with --input/--target).
CLI::Option* add_model(CLI::App& app, std::string& to, Many many);
// --set key=value, repeatable; in a sweep a comma list is an axis.
CLI::Option* add_set(CLI::App& app, std::vector<std::string>& to, Many many);
// -o/--output: `what` says what is written there and its default ("Results file (default: ...)").
CLI::Option* add_output(CLI::App& app, std::string& to, const std::string& what);
// -f/--format: `choices` lists the command's formats ("table or json").
CLI::Option* add_format(CLI::App& app, std::string& to, const std::string& choices);
// --gpu-context SIZE: memory outside LibTorch's allocator on a CUDA card (memory's and predict's).
CLI::Option* add_gpu_context(CLI::App& app, std::string& to, const std::string& what);
// --catalogue FILE: another device catalogue in the built-in one's columns.
CLI::Option* add_catalogue(CLI::App& app, std::string& to);

// Flags whose value type differs between subcommands (a batch list as text, one batch as a number):
// declared once each, here, for any type CLI11 reads. `what` is the help.
template <class T>
CLI::Option* add_batch(CLI::App& app, T& to, const std::string& what) {
  return app.add_option("--batch,-b", to, what);
}
template <class T>
CLI::Option* add_threads(CLI::App& app, T& to, const std::string& what) {
  return app.add_option("--threads", to, what);
}
template <class T>
CLI::Option* add_loader_threads(CLI::App& app, T& to, const std::string& what) {
  return app.add_option("--loader-threads", to, what);
}
// --data, --data-dtype, --data-transfer, --max-image-pixels: run's and explain's input (InputDataFlags)
// and the loader alone (`data`), `applies_to` ("Images", "Tokens") starting the help where given.
CLI::Option* add_data(CLI::App& app, std::string& to, const std::string& what);
CLI::Option* add_data_dtype(CLI::App& app, std::string& to, const std::string& applies_to = "");
CLI::Option* add_data_transfer(CLI::App& app, std::string& to, const std::string& applies_to = "");
CLI::Option* add_max_image_pixels(CLI::App& app, int64_t& to, const std::string& applies_to = "");
// A stopping setting's flag (core/stopping.h declares its name, help and rule): into `to` (a value in the
// flag's unit), or into a plain double where a subcommand gives the setting a meaning of its own (op's
// time per phase). `help` empty: the setting's own.
CLI::Option* add_stop_setting(CLI::App& app, const StopSetting& s, std::function<void(double)> to,
                              const std::string& help = "");
CLI::Option* add_stop_setting(CLI::App& app, const StopSetting& s, double& to, const std::string& help = "");
CLI::Option* add_system_allocator(CLI::App& app, bool& to, const std::string& what);
CLI::Option* add_tf32(CLI::App& app, std::string& to, const std::string& what);
CLI::Option* add_memory_limit(CLI::App& app, std::string& to, const std::string& what);
// explain's layer timing, given to its explain-layers child.
CLI::Option* add_op_time(CLI::App& app, double& to, const std::string& what);
CLI::Option* add_no_alternatives(CLI::App& app, bool& to, const std::string& what);
// The hidden children's (run-case, explain-layers, script-check) descriptor for their result.
CLI::Option* add_result_fd(CLI::App& app, int& to);

}  // namespace trainbench::cli
