// --model FILE.pt --input SPEC --target SPEC: how the measuring subcommands name a TorchScript model.
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/shared_flags.h"
#include "cli/options.h"
#include "core/value_rules.h"
#include "results/results_file.h"
#include "runner/measure.h"
#include "workloads/registry.h"
#include "workloads/script.h"

namespace trainbench::cli {

// Hidden `script-check [--memory-limit SIZE] -- FILE INPUT TARGET VOCAB`: the check of a TorchScript
// file (workloads/script.h), in a child process of the command that needs it.
struct ScriptCheckOptions {
  std::string file, input, target, vocab;
  std::string memory_limit;
  int result_fd = 3;
};

void ScriptFlags::add_to(CLI::App& app) {
  app.add_option(
      "--input", input,
      "With --model FILE.pt (TorchScript): one sample's shape, e.g. 3x224x224 (float) or tokens:512 (int64 ids)");
  app.add_option("--target", target, "With --model FILE.pt: classes:K (cross-entropy), next-token:V (LM loss) or mse");
}

std::vector<std::string> sweep_models(const std::string& models, const ScriptFlags& script,
                                      std::vector<std::map<std::string, std::string>>& params) {
  if (!script.given()) {
    std::vector<std::string> names = split_list(models, "model");
    for (const auto& m : names) {
      if (!is_known_model(m) && looks_like_model_file(m)) {
        throw InputError("--model " + m +
                         ": a TorchScript file needs --input (e.g. 3x224x224 or tokens:512) and --target "
                         "(classes:K, next-token:V or mse)");
      }
    }
    return names;
  }
  if (script.input.empty())
    throw InputError("--target needs --input too (one sample's shape, e.g. 3x224x224 or tokens:512)");
  if (script.target.empty()) throw InputError("--input needs --target too (classes:K, next-token:V or mse)");
  if (models.empty()) throw InputError("--input and --target need --model FILE.pt (a TorchScript file)");
  if (params.empty()) params.emplace_back();
  for (auto& p : params) {
    for (const char* key : {"file", "input", "target"}) {
      if (p.count(key)) throw InputError(std::string("--set ") + key + "= conflicts with --model/--input/--target");
    }
    p["file"] = models;
    p["input"] = script.input;
    p["target"] = script.target;
  }
  return {kScriptModel};
}

int cmd_script_check(const ScriptCheckOptions& o) {
  ChildSettings settings;
  settings.memory_limit_bytes = o.memory_limit.empty() ? 0 : parse_size(o.memory_limit, "memory limit");
  // The thread pools start and the memory limit applies as in a case's child: the check's forward
  // grows this process by at most what a case may.
  const Case on_cpu;  // a default case: the CPU (named, not a temporary: GCC 12 then sees its strings made)
  prepare_child_process(on_cpu, settings);
  bool out_of_memory = false;
  const std::string refusal =
      script_check_here({{"file", o.file}, {"input", o.input}, {"target", o.target}, {"vocab", o.vocab}},
                        &out_of_memory);
  const nlohmann::json verdict = {{"refusal", refusal}, {"out_of_memory", out_of_memory}};
  return detail::write_all_and_sync(o.result_fd, verdict.dump() + "\n") ? kExitOk : kExitFailure;
}

Command add_script_check(CLI::App& app) {
  auto o = std::make_shared<ScriptCheckOptions>();
  CLI::App* sub = app.add_subcommand("script-check", "Internal: check a TorchScript file in this process");
  sub->group("");  // hidden from --help
  add_memory_limit(*sub, o->memory_limit, "");
  add_result_fd(*sub, o->result_fd);
  sub->add_option("file", o->file)->required();
  sub->add_option("input", o->input)->required();
  sub->add_option("target", o->target)->required();
  sub->add_option("vocab", o->vocab)->required();
  return {sub, [o] {
            set_script_check_place(ScriptCheckPlace{});  // this process is the child that checks
            return cmd_script_check(*o);
          }};
}

}  // namespace trainbench::cli
