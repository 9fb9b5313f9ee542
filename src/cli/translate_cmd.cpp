// `kevo translate TASK`: a first kernel in the kevo ABI from the task's PyTorch reference, asked of
// the model and checked with compile and correctness feedback (docs/INTEROP.md).
#include <csignal>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/db_arg.h"
#include "cli/evaluator_factory.h"
#include "cli/llm_args.h"
#include "cli/signal_guard.h"
#include "cli/task_arg.h"
#include "cli/translate_stage.h"
#include "evolve/translate.h"
#include "llm/cancel.h"
#include "store/run_db.h"

namespace kevo::cli {

namespace {

llm::CancelToken g_translate_cancel;

// First Ctrl-C: stop after the round in flight, the run recorded as interrupted. A second one
// kills at once: the default action is back in place.
extern "C" void on_translate_sigint(int) {
  g_translate_cancel.cancel();
  std::signal(SIGINT, SIG_DFL);
}

struct TranslateArgs {
  std::string task, db, config_file, llm_mode;
  std::vector<std::string> models, overrides;
  int rounds = 4, seeds = 3;
  bool force = false, fake_gpu = false;
};

int run_translate(const TranslateArgs& a) {
  auto fail_with = [](const std::string& msg) {
    std::fprintf(stderr, "kevo translate: %s\n", msg.c_str());
    return 2;
  };
  auto task = resolve_task(a.task);
  if (!task) return fail_with(task.error().message);
  auto db = store::RunDb::open(db_or_default(a.db));
  if (!db) return fail_with(db.error().message);
  auto llm_toml = llm_toml_of(a.config_file);
  if (!llm_toml) return fail_with(llm_toml.error().message);
  auto lcfg = llm_config_of(*llm_toml, a.overrides, a.models, a.llm_mode);
  if (!lcfg) return fail_with(lcfg.error().message);
  if (lcfg->models.empty()) return fail_with("no model configured: " + evolve::translate_needs_model_note());
  auto models = models_of(*lcfg, **db, 0);
  if (!models) return fail_with(models.error().message);
  auto evaluator = make_evaluator_said(a.fake_gpu, "kevo translate");
  std::fprintf(stderr, "kevo translate: run database %s\n", (*db)->where().c_str());
  evolve::TranslateOptions o;
  o.rounds = a.rounds;
  o.force = a.force;
  o.eval.seeds = a.seeds;
  SignalGuard sigint(SIGINT, on_translate_sigint);
  return translate_and_report("kevo translate", *task, *evaluator, **db, models->ensemble.get(), g_translate_cancel,
                              o, false);
}

}  // namespace

void register_translate(CLI::App& app, int& exit_code) {
  auto* tr = app.add_subcommand(
      "translate",
      "Ask the LLM for a first kernel in the kevo ABI from TASK's PyTorch reference, checked with compile and\n"
      "correctness feedback for up to --rounds rounds; writes TASK/baseline.cu (docs/INTEROP.md).\n"
      "Exit codes: 0 written, 1 every round failed, 2 bad arguments (no model, a baseline already there),\n"
      "3 the LLM failed or the checker could not run a kernel (e.g. no usable GPU), 130 interrupted.");
  auto ta = std::make_shared<TranslateArgs>();
  tr->add_option("task", ta->task, "Task directory or bundled task name")->required();
  tr->add_option("--model", ta->models, "Model spec (repeat for an ensemble)");
  tr->add_option("--rounds", ta->rounds, "LLM rounds at most, the first included (default 4)")
      ->check(CLI::Range(1, 100));
  tr->add_option("-c,--config", ta->config_file, "TOML file with an [llm] table (docs/LLM.md)")
      ->check(CLI::ExistingFile);
  tr->add_option("--set", ta->overrides, "Override an LLM config key");
  tr->add_option("--llm", ta->llm_mode, "LLM answers: live, cache (default) or replay (offline)");
  tr->add_option("--db", ta->db, "Run database (default $KEVO_DB or ~/.local/share/kevo/runs.db)");
  tr->add_option("--seeds", ta->seeds, "Checker seeds per configuration")->check(CLI::Range(1, 100));
  tr->add_flag("--force", ta->force, "Replace an existing baseline.cu");
  tr->add_flag("--fake-gpu", ta->fake_gpu, "Test only: verdicts from '// fake:' markers, no GPU")->group("");
  tr->callback([ta, &exit_code] { exit_code = run_translate(*ta); });
}

}  // namespace kevo::cli
