// `trainbench predict`: a training step's speed and memory on cards of the catalogue (docs/prediction.md).
// The model's step is censused on this machine's CPU (ops/census.h) or read from --census; each card's
// step comes from the spec sheet (predict/method.h), or with --from from a per-layer profile that
// `explain` measured on a GPU. Predictions are records with status `predicted`: printed, written with
// -o, never stored. Owns its flags.
#include <cmath>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/options.h"
#include "cli/predict.h"
#include "cli/shared_flags.h"
#include "core/device.h"
#include "core/device_text.h"
#include "core/failure.h"
#include "core/input_file.h"
#include "ops/census.h"
#include "predict/catalogue.h"
#include "predict/gpu_memory.h"
#include "predict/method.h"
#include "predict/scaling.h"
#include "results/journal.h"
#include "results/number_format.h"
#include "results/results_file.h"
#include "results/text_table.h"
#include "runner/plan.h"
#include "runner/run_context.h"

namespace trainbench::cli {

namespace {

struct PredictFlags {
  std::string model, batches, precisions = "fp32", optimizer = "sgd", layout = "nchw";
  std::vector<std::string> sets;
  ScriptFlags script;
  std::string on, from, from_device, catalogue, census, census_out, constants, tf32 = "off", gpu_context;
  std::string format = "table", output;
  std::string gpus, link, network;  // --gpus: the step on N GPUs (predict/scaling.h)
  int gpus_per_node = 8;
};

// --gpus, --link, --network and --gpus-per-node, validated before any census.
std::optional<std::pair<std::vector<int64_t>, predict::Cluster>> scaling_request(const PredictFlags& o) {
  if (o.gpus.empty()) {
    if (!o.link.empty() || !o.network.empty()) throw InputError("--link and --network describe a cluster for --gpus");
    return std::nullopt;
  }
  const std::vector<int64_t> gpus = parse_int_list(o.gpus, "--gpus");
  if (o.link.empty()) throw InputError("--gpus needs --link, the GPUs' link inside a node (e.g. nvlink4, pcie5)");
  predict::Cluster cluster;
  cluster.intra = o.link;
  cluster.gpus_per_node = o.gpus_per_node;
  if (!o.network.empty()) std::tie(cluster.ports, cluster.inter) = predict::parse_network(o.network);
  for (const int64_t n : gpus) (void)predict::scaling_points(1.0, 1, 0.0, {n}, cluster);  // every rule once
  return std::make_pair(gpus, cluster);
}

std::string read_json_text(const std::string& path, const std::string& flag) {
  try {
    return read_input_file(path);
  } catch (const std::exception& e) {
    throw InputError(flag + " " + e.what());
  }
}

// A census read back must be the census of the request: one line naming the first difference.
void check_census_matches(const predict::StepCensus& c, const Case& want, const std::string& path) {
  const auto differ = [&](const char* what, const std::string& has, const std::string& asked) {
    if (has != asked)
      throw InputError(fmt::format("--census {}: its {} is '{}', the request's is '{}'", path, what, has, asked));
  };
  differ("model", c.model, want.model);
  differ("optimizer", c.optimizer, want.optimizer);
  differ("layout", c.layout, to_string(want.layout));
  for (const auto& [k, v] : want.params) {
    const auto it = c.params.find(k);
    differ(("parameter " + k).c_str(), it == c.params.end() ? "(default)" : it->second, v);
  }
  for (const auto& [k, v] : c.params)
    if (!want.params.count(k)) differ(("parameter " + k).c_str(), v, "(default)");
}

predict::StepCensus take_census_of(const Case& c) {
  configure_threads(0);
  std::cerr << "taking the step's census on this CPU: " << c.model << " at batches 1 and 2, fp32\n";
  try {
    return take_census(c, 1, 2);
  } catch (const std::exception&) {
    // A batch norm refuses a single sample over a 1x1 map: take it at 2 and 3.
    return take_census(c, 2, 3);
  }
}

predict::Request request_for(const Case& c, bool tf32, int64_t context) {
  predict::Request r;
  r.batch = c.batch;
  r.precision = c.precision.str();
  r.tf32 = tf32;
  const auto attention = c.params.find("attention");
  r.fused_attention = attention == c.params.end() || attention->second != "math";
  r.context_bytes = context;
  return r;
}

predict::StepCensus census_for(const PredictFlags& o, const Case& c) {
  if (!o.census.empty()) {
    predict::StepCensus census;
    try {
      census = predict::census_from_json(nlohmann::json::parse(read_json_text(o.census, "--census")));
    } catch (const InputError&) {
      throw;
    } catch (const std::exception& e) {
      throw InputError(fmt::format("--census {}: {}", o.census, first_line(e.what())));
    }
    check_census_matches(census, c, o.census);
    return census;
  }
  return take_census_of(c);
}

// The catalogue row of the card a profile was measured on: --from-device, else its name and memory
// (docs/prediction.md, "Which card a profile came from").
predict::DeviceSpec profile_card(const std::vector<predict::DeviceSpec>& catalogue, const ResultsFile& f,
                                 const PredictFlags& o) {
  if (!o.from_device.empty()) return predict::select_devices(catalogue, {o.from_device}, "--from-device").front();
  std::string name = f.context.device_name;
  for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  const bool pcie = name.find("pcie") != std::string::npos;
  std::vector<predict::DeviceSpec> found;
  for (const auto& d : catalogue) {
    // Every token of the row's name that carries a digit (the model and the memory size) is in the
    // device's name, form factors aside; the memory the device reported is within 5% of the row's.
    std::string row = d.name;
    for (char& ch : row) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    bool all = true;
    size_t at = 0;
    while (at < row.size()) {
      const size_t end = row.find(' ', at);
      const std::string token = row.substr(at, end == std::string::npos ? std::string::npos : end - at);
      at = end == std::string::npos ? row.size() : end + 1;
      const bool form = token.rfind("sxm", 0) == 0 || token == "pcie";
      if (!form && token.find_first_of("0123456789") != std::string::npos && name.find(token) == std::string::npos)
        all = false;
    }
    const bool row_pcie = row.find("pcie") != std::string::npos;
    const double memory = static_cast<double>(f.context.device_memory_bytes.value_or(0));
    const bool memory_matches =
        memory <= 0.0 || std::abs(memory - static_cast<double>(d.visible_memory_bytes())) < 0.05 * memory;
    if (all && row_pcie == pcie && memory_matches) found.push_back(d);
  }
  if (found.size() == 1) return found.front();
  throw InputError(
      fmt::format("--from {}: the profile's device '{}' is {} of the catalogue's cards; name it with "
                  "--from-device ID (`trainbench devices`)",
                  o.from, f.context.device_name, found.empty() ? "none" : "more than one"));
}

// The profile of `c` in a results file from `explain` on a GPU. One line for a CPU profile, for a file
// without the layers, and for a model, batch or precision other than the request's.
predict::Profile read_profile(const ResultsFile& f, const Case& c, const std::string& path) {
  if (f.benchmarks.size() != 1 || !f.explain)
    throw InputError("--from " + path + ": not an `explain` results file (one step and its layers)");
  const Record& step = f.benchmarks.front();
  if (!is_gpu_device_text(step.device))
    throw InputError("--from " + path + ": a profile measured on " + step.device +
                     " says nothing about a GPU's kernels; without --from, predict uses the spec-sheet path, "
                     "which needs no profile");
  if (!step.ok()) throw InputError("--from " + path + ": its step did not train (" + to_string(step.status) + ")");
  const auto differ = [&](const char* what, const std::string& has, const std::string& asked) {
    if (has != asked)
      throw InputError(fmt::format("--from {}: its {} is {}, the request's is {}", path, what, has, asked));
  };
  differ("model", step.model, c.model);
  differ("batch", std::to_string(step.batch_size), std::to_string(c.batch));
  differ("precision", step.precision, c.precision.str());
  differ("optimizer", step.optimizer, c.optimizer);
  differ("layout", step.layout, to_string(c.layout));
  if (step.params != c.params) differ("parameters", fmt::format("{}", step.name), c.descriptor());
  predict::Profile p;
  p.step_s = f.explain->step_time_s;
  p.other_s = f.explain->other_time_s;
  for (const auto& l : f.explain->layers) {
    if (l.status != Status::ok) continue;
    predict::ProfileLayer pl;
    pl.descriptor = l.op;
    pl.count = l.count;
    pl.phase_s[0] = l.fwd_s;
    pl.phase_s[1] = l.input_grad ? l.bwd_data_s : 0.0;
    pl.phase_s[2] = l.bwd_weights_s;
    p.layers.push_back(pl);
  }
  return p;
}

Record predicted_record(const Case& c, const predict::StepCensus& census, const predict::DeviceSpec& d,
                        const predict::StepForecast& f, const predict::Request& r, const predict::Constants& k,
                        const std::string& from, const std::string& source_device) {
  Case on_gpu = c;
  on_gpu.device = DeviceSpec{"cuda", -1};
  Record rec;
  rec.name = on_gpu.descriptor();
  rec.model = c.model;
  rec.params = c.params;
  rec.batch_size = c.batch;
  rec.device = "cuda";
  rec.precision = c.precision.str();
  rec.layout = to_string(c.layout);
  rec.optimizer = c.optimizer;
  rec.status = Status::predicted;
  rec.unit = census.unit;
  rec.throughput = static_cast<double>(c.batch) / f.step_s;
  rec.tokens_per_s = rec.throughput * static_cast<double>(census.tokens_per_sample);
  rec.step_time_s.median = rec.step_time_s.mean = rec.step_time_s.min = rec.step_time_s.max = f.step_s;
  rec.step_time_s.median_noise = std::numeric_limits<double>::quiet_NaN();
  rec.step_time_s.lag1_autocorrelation = std::numeric_limits<double>::quiet_NaN();
  rec.flops_per_step = census.model_flops_per_sample * static_cast<double>(c.batch);
  rec.achieved_gflops = rec.flops_per_step / f.step_s / 1e9;
  rec.parameters = census.parameters;
  rec.tf32 = r.tf32 ? "on" : "off";
  rec.peak_memory_bytes = f.memory.bytes;
  PredictionInfo p;
  p.method = from.empty() ? "spec-sheet" : "profile";
  p.device_id = d.id;
  p.device_name = d.name;
  p.catalogue_source = d.source;
  p.source_device = source_device;
  p.source_file = from;
  p.constants = k.version;
  p.step_time_low_s = f.low_s;
  p.step_time_high_s = f.high_s;
  p.throughput_low = static_cast<double>(c.batch) / f.high_s;
  p.throughput_high = f.low_s > 0.0 ? static_cast<double>(c.batch) / f.low_s : rec.throughput;
  p.compute_share = std::min(1.0, f.compute_s / f.step_s);
  p.memory_share = std::min(1.0, f.memory_s / f.step_s);
  p.launch_share = std::min(1.0, f.launch_s / f.step_s);
  for (const auto& [label, share] : f.slowest) p.slowest_layers.push_back({label, std::min(1.0, share)});
  p.memory_bytes = f.memory.bytes;
  p.fits = f.memory.fits;
  p.largest_batch = f.memory.largest_batch;
  p.largest_batch_low = f.memory.largest_batch_low;
  p.largest_batch_high = f.memory.largest_batch_high;
  std::vector<std::string> notes;
  if (!f.peak.note.empty()) notes.push_back(f.peak.note);
  notes.push_back(fmt::format("products at the {} peak, {:g} TFLOP/s", f.peak.figure, f.peak.tflops));
  p.notes = fmt::format("{}", fmt::join(notes, "; "));
  rec.prediction = p;
  return rec;
}

// --constants FILE, else the fitted constants.
predict::Constants constants_of(const PredictFlags& o) {
  if (o.constants.empty()) return predict::fitted_constants();
  try {
    return predict::constants_from_json(nlohmann::json::parse(read_json_text(o.constants, "--constants")));
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    throw InputError(fmt::format("--constants {}: {}", o.constants, first_line(e.what())));
  }
}

// The cases predicted: one model, one value per --set key, every batch and precision, validated as CPU cases.
std::vector<Case> predict_plan(const PredictFlags& o) {
  Sweep sweep;
  sweep.params = params_product(parse_sets(o.sets));
  sweep.models = sweep_models(o.model, o.script, sweep.params);
  if (sweep.models.size() != 1 || sweep.params.size() != 1)
    throw InputError("predict takes one model and one value per --set key");
  sweep.batches = parse_int_list(o.batches, "--batch");
  sweep.precisions = split_list(o.precisions, "--precision");
  sweep.layouts = {o.layout};
  sweep.optimizers = {o.optimizer};
  sweep.devices = {"cpu"};  // validated as a CPU case; predicted for the cards
  return make_plan(sweep);
}

// -o and --census-out checked against every input (and each other) before anything runs; -o locked.
void claim_outputs(const PredictFlags& o, const std::vector<Case>& plan, Journal& output_lock) {
  std::vector<std::string> inputs = case_input_files(plan);
  for (const std::string* in : {&o.from, &o.census, &o.catalogue, &o.constants})
    if (!in->empty()) inputs.push_back(*in);
  if (!o.output.empty()) {
    check_output(o.output, "-o", inputs, default_store_or_none());
    (void)lock_output(o.output, "predict", output_lock);
  }
  if (!o.census_out.empty()) {
    // The census is not the predictions' file either.
    std::vector<std::string> taken = inputs;
    taken.push_back(o.output);
    check_output(o.census_out, "--census-out", taken, default_store_or_none());
  }
}

int cmd_predict(const PredictFlags& o) {
  const predict::Constants constants = constants_of(o);
  if (o.format != "table" && o.format != "json")
    throw InputError("--format: unknown format '" + o.format + "' (table or json)");
  if (o.tf32 != "on" && o.tf32 != "off") throw InputError("--tf32: '" + o.tf32 + "' (on or off)");
  if (!o.from_device.empty() && o.from.empty()) throw InputError("--from-device names the card of a --from profile");
  const auto catalogue = predict::load_catalogue(o.catalogue);
  const auto targets = predict::select_devices(catalogue, split_list(o.on, "--on"));
  const int64_t context = o.gpu_context.empty() ? kGpuContextBytes : parse_size(o.gpu_context, "--gpu-context");
  const auto scaling = scaling_request(o);

  const std::vector<Case> plan = predict_plan(o);
  Journal output_lock;
  claim_outputs(o, plan, output_lock);

  std::optional<ResultsFile> profile_file;
  predict::DeviceSpec source;
  if (!o.from.empty()) {
    try {
      profile_file = read_results(o.from);
    } catch (const std::exception& e) {
      throw InputError("--from " + first_line(e.what()));
    }
    (void)read_profile(*profile_file, plan.front(), o.from);  // a CPU profile is refused before any census
    source = profile_card(catalogue, *profile_file, o);
  }

  const predict::StepCensus census = census_for(o, plan.front());
  if (!o.census_out.empty()) {
    write_text_atomic(o.census_out, predict::to_json(census).dump(1) + "\n");
    std::cerr << "census: " << o.census_out << "\n";
  }

  ResultsFile out;
  out.context = collect_context(0, "cpu");
  for (const Case& c : plan) {
    const predict::Request r = request_for(c, o.tf32 == "on", context);
    std::optional<predict::Profile> profile;
    if (profile_file) profile = read_profile(*profile_file, c, o.from);
    for (const auto& d : targets) {
      const predict::StepForecast f = profile ? predict::carry(census, *profile, source, d, r, constants)
                                              : predict::forecast(census, d, r, constants);
      out.benchmarks.push_back(predicted_record(c, census, d, f, r, constants, o.from, profile ? source.id : ""));
      if (scaling) {
        // Gradients in the parameters' type: 2 bytes under the pure precisions, else fp32 master copies.
        const double grad_bytes = static_cast<double>(census.parameters) * (c.precision.pure ? 2.0 : 4.0);
        out.benchmarks.back().prediction->scaling =
            predict::scaling_points(f.step_s, c.batch, grad_bytes, scaling->first, scaling->second);
      }
    }
  }
  if (!o.output.empty()) write_results_atomic(o.output, out);
  if (o.format == "json") {
    std::cout << results_to_string(out);
  } else {
    print_predictions(out, !o.from.empty(), source.id, constants, context);
  }
  if (!o.output.empty()) std::cerr << "predictions: " << o.output << "\n";
  return kExitOk;
}

}  // namespace

const predict::StepCensus& census_of(const Case& c, std::map<std::string, predict::StepCensus>& cache) {
  Case key = c;
  key.batch = 1;
  key.precision = Precision{};
  key.device = DeviceSpec{};
  key.threads = 0;
  const std::string k = key.descriptor();
  auto it = cache.find(k);
  if (it == cache.end()) it = cache.emplace(k, take_census_of(c)).first;
  return it->second;
}

predict::StepForecast forecast_case(const Case& c, const predict::DeviceSpec& card,
                                    std::map<std::string, predict::StepCensus>& cache) {
  return predict::forecast(census_of(c, cache), card, request_for(c, false, kGpuContextBytes),
                           predict::fitted_constants());
}

void predict_board_columns(Board& b, const std::vector<predict::DeviceSpec>& cards) {
  // Each row's case as `predict` would take it (its descriptor is compare's key and a device).
  std::map<std::string, predict::StepCensus> censuses;
  add_predicted_columns(b, cards,
                        [&](const BoardRow& row, const predict::DeviceSpec& card) -> std::optional<BoardPredictedCell> {
                          try {
                            Case c = parse_case(row.key + ":cpu");
                            validate_case(c);
                            const predict::StepForecast f = forecast_case(c, card, censuses);
                            const double batch = static_cast<double>(c.batch);
                            return BoardPredictedCell{batch / f.step_s, batch / f.high_s, batch / f.low_s,
                                                      f.memory.fits, f.memory.largest_batch};
                          } catch (const std::exception& e) {
                            std::cerr << "board: no prediction for " << row.key << ": " << first_line(e.what()) << "\n";
                            return std::nullopt;
                          }
                        });
}

Command add_predict(CLI::App& app) {
  auto o = std::make_shared<PredictFlags>();
  CLI::App* sub = app.add_subcommand(
      "predict", "How fast a model trains, and whether it fits, on GPUs you do not have (docs/prediction.md)");
  add_model(*sub, o->model, Many::one)->required();
  add_batch(*sub, o->batches, "Batch sizes, comma-separated")->required();
  add_set(*sub, o->sets, Many::one);
  o->script.add_to(*sub);
  add_precision(*sub, o->precisions, Many::list);
  add_optimizer(*sub, o->optimizer, Many::one);
  add_layout(*sub, o->layout, Many::one);
  sub->add_option("--on", o->on, "Catalogue ids, comma-separated, or all (`trainbench devices`)")->required();
  sub->add_option("--from", o->from,
                  "A results file from `explain` on a GPU: carry its measured layers to each card (default: from "
                  "the spec sheets alone)");
  sub->add_option("--from-device", o->from_device,
                  "The catalogue id of the card --from was measured on "
                  "(default: from its device name and memory)");
  add_tf32(*sub, o->tf32, "fp32 products on TF32 tensor cores: on or off (default off, as run)");
  add_gpu_context(
      *sub, o->gpu_context,
      "Memory outside LibTorch's allocator on each card (default 693M, measured on an H100 with CUDA 13.0)");
  add_catalogue(*sub, o->catalogue);
  sub->add_option("--census", o->census, "A census written by --census-out (skips taking one)");
  sub->add_option("--census-out", o->census_out, "Also write the step's census to this file");
  sub->add_option("--constants", o->constants, "The method's constants from a file (bench/fit_predict.py)");
  sub->add_option("--gpus", o->gpus, "Also predict the step on these GPU counts, data parallel, e.g. 8,64");
  sub->add_option("--link", o->link, "--gpus: the link between a node's GPUs: nvlink2..5, pcie3..5");
  sub->add_option("--network", o->network, "--gpus over nodes: ports per node x link, e.g. 8xib-ndr");
  sub->add_option("--gpus-per-node", o->gpus_per_node, "--gpus: GPUs in a node (default 8)");
  add_format(*sub, o->format, "table or json");
  add_output(*sub, o->output, "Also write the predictions as a results file");
  return {sub, [o] { return cmd_predict(*o); }};
}

}  // namespace trainbench::cli
