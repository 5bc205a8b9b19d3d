#include "cli/shared_flags.h"

#include "core/layout.h"
#include "core/precision_text.h"
#include "core/value_rules.h"

namespace trainbench::cli {
namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

std::string many_text(Many many) { return many == Many::list ? ", comma-separated" : ""; }

}  // namespace

CLI::Validator rule(const NumberRule& r) {
  return CLI::Validator([r](std::string& text) { return number_text_problem(text, r); }, "", "number rule");
}

std::string prefix(const std::string& applies_to) { return applies_to.empty() ? "" : applies_to + ": "; }

CLI::Option* add_precision(CLI::App& app, std::string& to, Many many, PrecisionSet set, const std::string& applies_to) {
  const std::string values = set == PrecisionSet::precisions
                                 ? joined(precision_names()) + " (fp16, bf16: mixed precision; -pure: all in that type)"
                                 : joined(dtype_names());
  return app.add_option("--precision", to, prefix(applies_to) + values + many_text(many));
}

CLI::Option* add_layout(CLI::App& app, std::string& to, Many many, const std::string& applies_to) {
  return app.add_option("--layout", to,
                        prefix(applies_to) + joined(layout_names()) + " (nhwc: channels-last)" + many_text(many));
}

CLI::Option* add_device(CLI::App& app, std::string& to, Many many) {
  return app.add_option("--device,-d", to,
                        std::string(many == Many::list ? "Devices" : "The device") +
                            ": cpu, cuda, cuda:N (default: the best one present)" + many_text(many));
}

CLI::Option* add_optimizer(CLI::App& app, std::string& to, Many many) {
  return app.add_option("--optimizer", to, "sgd, momentum, adam, adamw" + many_text(many));
}

CLI::Option* add_model(CLI::App& app, std::string& to, Many many) {
  return app.add_option("--model,-m", to,
                        many == Many::list ? "Models, comma-separated (see `trainbench list`), or one TorchScript "
                                             "file with --input and --target"
                                           : "The model (see `trainbench list`)");
}

CLI::Option* add_gpu_context(CLI::App& app, std::string& to, const std::string& what) {
  return app.add_option("--gpu-context", to, what);
}

CLI::Option* add_set(CLI::App& app, std::vector<std::string>& to, Many many) {
  return app.add_option("--set", to,
                        std::string("Workload parameter key=value") +
                            (many == Many::list ? " (a comma list is a sweep axis)" : "") + "; repeatable");
}

CLI::Option* add_output(CLI::App& app, std::string& to, const std::string& what) {
  return app.add_option("--output,-o", to, what);
}

CLI::Option* add_format(CLI::App& app, std::string& to, const std::string& choices) {
  return app.add_option("--format,-f", to, choices);
}

CLI::Option* add_catalogue(CLI::App& app, std::string& to) {
  return app.add_option("--catalogue", to,
                        "Another device catalogue file, in the built-in one's columns (docs/prediction.md)");
}

CLI::Option* add_data(CLI::App& app, std::string& to, const std::string& what) {
  return app.add_option("--data", to, what);
}

CLI::Option* add_data_dtype(CLI::App& app, std::string& to, const std::string& applies_to) {
  return app.add_option(
      "--data-dtype", to,
      (applies_to.empty() ? std::string("Token file ids") : applies_to) + ": uint16 (nanoGPT's .bin) or uint32");
}

CLI::Option* add_data_transfer(CLI::App& app, std::string& to, const std::string& applies_to) {
  return app.add_option("--data-transfer", to,
                        (applies_to.empty() ? std::string("Images to the device") : applies_to) +
                            ": float (normalized on the host) or uint8 (bytes, normalized on the device)");
}

CLI::Option* add_max_image_pixels(CLI::App& app, int64_t& to, const std::string& applies_to) {
  return app
      .add_option(
          "--max-image-pixels", to,
          prefix(applies_to) + "skip a file whose header claims more pixels (default 178956970, Pillow's limit)")
      ->check(rule(kImagePixels));
}

CLI::Option* add_stop_setting(CLI::App& app, const StopSetting& s, std::function<void(double)> to,
                              const std::string& help) {
  return app.add_option_function<double>(stop_flag(s), std::move(to), help.empty() ? s.help : help)
      ->check(rule(*s.rule));
}

CLI::Option* add_stop_setting(CLI::App& app, const StopSetting& s, double& to, const std::string& help) {
  return app.add_option(stop_flag(s), to, help.empty() ? s.help : help)->check(rule(*s.rule));
}

CLI::Option* add_system_allocator(CLI::App& app, bool& to, const std::string& what) {
  return app.add_flag("--system-allocator", to, what);
}

CLI::Option* add_tf32(CLI::App& app, std::string& to, const std::string& what) {
  return app.add_option("--tf32", to, what);
}

CLI::Option* add_memory_limit(CLI::App& app, std::string& to, const std::string& what) {
  return app.add_option("--memory-limit", to, what);
}

CLI::Option* add_op_time(CLI::App& app, double& to, const std::string& what) {
  return app.add_option("--op-time", to, what)->check(rule(kSeconds));
}

CLI::Option* add_no_alternatives(CLI::App& app, bool& to, const std::string& what) {
  return app.add_flag("--no-alternatives", to, what);
}

CLI::Option* add_result_fd(CLI::App& app, int& to) { return app.add_option("--result-fd", to); }

}  // namespace trainbench::cli
