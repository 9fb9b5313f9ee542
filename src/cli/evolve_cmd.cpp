// `kevo evolve TASK`: the evolution engine over the checker, its run recorded in the run database
// (docs/EVOLVE.md). `kevo runs`, `kevo show` and `kevo export` read what it recorded.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "check/evaluator.h"
#include "cli/agent_mutator.h"
#include "cli/commands.h"
#include "cli/db_arg.h"
#include "cli/evaluator_factory.h"
#include "cli/evolve_launch.h"
#include "cli/llm_args.h"
#include "cli/pool_args.h"
#include "cli/signal_guard.h"
#include "cli/task_arg.h"
#include "cli/translate_stage.h"
#include "evolve/engine.h"
#include "evolve/eval_pool.h"
#include "evolve/events.h"
#include "evolve/strategy.h"
#include "evolve/translate.h"
#include "llm/client.h"
#include "llm/config.h"
#include "llm/ensemble.h"
#include "llm/errors.h"
#include "results/candidate_ref.h"
#include "store/run_db.h"
#include "util/gpu_util_sampler.h"
#include "util/json_fields.h"

namespace kevo::cli {

namespace {

using nlohmann::json;

llm::CancelToken g_evolve_cancel;

// First Ctrl-C: stop cleanly (the engine finishes or discards what is in flight and records the
// run as interrupted). A second one kills at once: the default action is back in place.
extern "C" void on_evolve_sigint(int) {
  g_evolve_cancel.cancel();
  std::signal(SIGINT, SIG_DFL);
}

struct EvolveArgs {
  std::string task, strategy = "kevo-default", db, config_file, llm_mode, events_file, verifier_model, mutator;
  std::vector<std::string> models, overrides, events;
  int budget_candidates = 0, parallel = 0, seeds = 3;
  int64_t budget_calls = 0, budget_tokens = 0, resume = 0;
  double stop_at_sol = 0;
  double budget_usd = 0, budget_minutes = 0, time_budget = evolve::kSearchTimeBudgetS, verify_time_budget = 4.0;
  uint64_t seed = 0;
  bool fake_gpu = false, quiet = false, reverify_baseline = false, profile = false, no_profile_feedback = false;
  bool no_race = false;
  PoolArgs pool;
};

class StatusPrinter {
 public:
  explicit StatusPrinter(bool quiet) : quiet_(quiet), tty_(::isatty(STDERR_FILENO) != 0) {}
  void operator()(const evolve::Progress& p) {
    if (quiet_) return;
    std::string line = p.status_line();
    if (tty_) {
      std::fprintf(stderr, "\r%s\x1b[K", line.c_str());
      shown_ = true;
    } else if (p.done != last_done_ || p.phase != last_phase_ || p.detail != last_detail_) {
      std::fprintf(stderr, "%s\n", line.c_str());  // logs: a line per candidate and per step
    }
    last_done_ = p.done;
    last_phase_ = p.phase;
    last_detail_ = p.detail;
  }
  void end() {
    if (shown_) std::fprintf(stderr, "\n");
    shown_ = false;
  }

 private:
  bool quiet_, tty_, shown_ = false;
  int last_done_ = -1;
  evolve::Progress::Phase last_phase_ = evolve::Progress::Phase::kSearch;
  std::string last_detail_;
};

// What `kevo evolve` runs: the task, the options (a stored run's own, else the preset, then the
// config file, then flags) and the run it continues, if any.
struct EvolvePlan {
  Task task;
  evolve::EngineOptions opts;
  std::optional<store::RunRow> resumed;
  EvolveLaunch launch;  // models, evaluator, GPUs: the flags, or the resumed run's own under them
};

// The launch this session runs with: the flags given; for a resume, the run's stored launch with
// each flag given now over it. --fake-gpu can only be added (the engine refuses a resume that
// changes the evaluator), and --set adds to the stored overrides.
Result<EvolveLaunch> launch_of(const EvolveArgs& a, CLI::App* cmd, const store::RunRow* resumed,
                               const nlohmann::json& stored) {
  EvolveLaunch l;
  if (resumed && !stored.empty()) {
    auto s = EvolveLaunch::from_json(stored);
    if (!s) return fail("run {}: stored configuration: {}", resumed->id, s.error().message);
    l = *s;
  }
  auto given = [&](const char* flag) { return !resumed || cmd->count(flag) > 0; };
  if (given("--model")) l.models = a.models;
  l.overrides.insert(l.overrides.end(), a.overrides.begin(), a.overrides.end());
  if (given("--llm")) l.llm_mode = a.llm_mode;
  if (!a.config_file.empty()) {
    auto t = llm_toml_of(a.config_file);
    if (!t) return t.unexpected();
    if (!t->empty()) l.llm_toml = *t;  // a file of [evolve] alone leaves the stored LLM settings
  }
  if (given("--verifier-model")) l.verifier_model = a.verifier_model;
  l.fake_gpu = a.fake_gpu || (resumed && evolve::run_was_fake(*resumed));
  if (resumed) KEVO_TRY(evolve::check_resume_evaluator(*resumed, l.fake_gpu));
  if (given("--gpus")) l.pool.gpus = a.pool.gpus;
  if (given("--evals-per-gpu")) l.pool.evals_per_gpu = a.pool.evals_per_gpu;
  if (given("--queue")) l.pool.queue = a.pool.queue;
  if (given("--queue-slots")) l.pool.queue_slots = a.pool.queue_slots;
  // A run an older kevo started stored only its model's name: continuing it offline would change
  // what it is.
  const std::string model = field_or(json::parse(resumed ? resumed->config_json : "{}", nullptr, false), "llm", "");
  if (resumed && stored.empty() && l.models.empty() && !model.empty())
    return fail("run {} was started with model {} by a kevo that did not store its settings: give them again "
                "(--model ...)",
                resumed->id, model);
  return l;
}

Result<EvolvePlan> plan_evolve(const EvolveArgs& a, CLI::App* cmd, store::RunDb& db) {
  evolve::EngineOptions opts;
  std::optional<store::RunRow> resumed;
  Result<Task> task = fail("no task");
  if (a.resume) {
    auto row = db.get_run(a.resume);
    if (!row) return row.unexpected();
    if (row->strategy == "translate")
      return fail("run {} is a `kevo translate` run, not an evolution run: it cannot be resumed (its record is "
                  "kept as it is); start one with `kevo evolve {}`",
                  row->id, row->task);
    auto o = evolve::options_of_run(*row);
    if (!o) return o.unexpected();
    opts = *o;
    resumed = *row;
    task = a.task.empty() ? load_task(row->task_dir) : resolve_task(a.task);
  } else {
    if (a.task.empty()) return fail("give a TASK (or --resume RUN)");
    auto s = evolve::preset(a.strategy);
    if (!s) return s.unexpected();
    opts.strategy = *s;
    task = resolve_task(a.task);
  }
  if (!task) return task.unexpected();
  if (!a.config_file.empty() && !resumed) {
    auto s = evolve::load_strategy_file(a.config_file, opts.strategy);
    if (!s) return s.unexpected();
    opts.strategy = *s;
  }
  if (cmd->count("--parallel")) opts.strategy.parallel = a.parallel;
  if (cmd->count("--mutator")) apply_mutator(opts.strategy, *evolve::parse_mutator(a.mutator));  // checked by CLI11
  if (!resumed) opts.budgets.max_candidates = opts.strategy.max_candidates;
  if (cmd->count("--budget-candidates")) opts.budgets.max_candidates = a.budget_candidates;
  if (cmd->count("--budget-calls")) opts.budgets.max_calls = a.budget_calls;
  if (cmd->count("--budget-tokens")) opts.budgets.max_tokens = a.budget_tokens;
  if (cmd->count("--budget-usd")) opts.budgets.max_usd = a.budget_usd;
  if (cmd->count("--budget-minutes")) opts.budgets.max_minutes = a.budget_minutes;
  if (cmd->count("--stop-at-sol")) opts.budgets.stop_at_sol = a.stop_at_sol;
  if (cmd->count("--seed")) opts.seed = a.seed;
  if (cmd->count("--seeds")) opts.eval.seeds = a.seeds;
  if (cmd->count("--time-budget")) opts.eval.time_budget_s = a.time_budget;
  if (cmd->count("--verify-time-budget")) opts.verify_time_budget_s = a.verify_time_budget;
  if (a.profile) opts.eval.profile = true;
  if (a.no_profile_feedback) opts.strategy.profile_feedback = false;
  if (a.no_race) opts.race_timing = false;
  opts.reuse_baseline = !a.reverify_baseline;
  auto launch = launch_of(a, cmd, resumed ? &*resumed : nullptr, opts.launch);
  if (!launch) return launch.unexpected();
  opts.launch = launch->to_json();
  return EvolvePlan{std::move(*task), opts, resumed, std::move(*launch)};
}

Result<std::unique_ptr<evolve::JsonlEventSink>> events_of(const EvolveArgs& a) {
  if (a.events.empty()) return std::unique_ptr<evolve::JsonlEventSink>();
  if (a.events.size() == 2 && a.events[0] != "jsonl") return fail("--events: only the jsonl format exists");
  // `--events jsonl` alone would write a file named "jsonl".
  if (a.events.size() == 1 && a.events[0] == "jsonl") return fail("--events jsonl needs a FILE: --events jsonl FILE");
  return evolve::JsonlEventSink::open(a.events.back());
}

// One short call to each model before anything else: a model that cannot answer (nothing listens
// at its URL, a bad key, an unknown model) stops the command at once, with the model named, rather
// than after the search's retries on every proposal. Its own context: nothing cached, no budget of
// the run spent. Replay answers from the cache alone, so it asks nothing.
Status ping_models(llm::LlmConfig cfg) {
  if (cfg.cache == llm::CacheMode::kReplay) return {};
  cfg.cache = llm::CacheMode::kLive;
  cfg.retry.max_attempts = 1;
  auto ctx = llm::make_context(cfg);
  for (const auto& spec : cfg.models) {
    auto client = llm::make_client(spec, ctx);
    if (!client) return client.unexpected();
    llm::ChatRequest req = llm::ChatRequest::user("Reply with the single word: pong");
    req.max_tokens = 16;
    auto r = (*client)->chat(req, g_evolve_cancel);
    if (!r && llm::error_kind(r.error()) != llm::ErrorKind::kCancelled)
      return fail("model {} did not answer a first short request: {} (`kevo llm ping {}` checks it alone)", spec,
                  r.error().message, spec);
  }
  return {};
}

// A candidate of the run as people read it: "#13 (seq 8)" (results/candidate_ref.h).
std::string ref_of(store::RunDb& db, int64_t id) {
  auto c = db.candidate(id);
  return c ? results::candidate_ref(*c) : results::candidate_ref(id, 0);
}

// The summary of a finished engine run; returns the exit code.
int report_evolve(const evolve::RunOutcome& out, const Task& task, store::RunDb& db, const std::string& dbpath,
                  const llm::Ensemble* ens) {
  std::printf("run %lld  task %s  %s  stop: %s\n", static_cast<long long>(out.run_id), task.name.c_str(),
              store::to_string(out.status), out.stop_reason.c_str());
  // Over no candidate the occupancy is the baseline's alone: not a figure of the search.
  const std::string busy = out.candidates ? percent_or_na(out.gpu_busy) : "n/a";
  std::printf("candidates %d (valid %d)  evaluators busy %s  GPU util %s  %.1f candidates/min\n", out.candidates,
              out.valid, busy.c_str(), evolve::gpu_util_text(out.gpu_util_nvml).c_str(),
              out.wall_s > 0 ? out.candidates * 60.0 / out.wall_s : 0.0);
  std::printf("time %.1f s: baseline %.1f s%s, search %.1f s (%d candidates, %.1f candidates/min, evaluators busy %s, "
              "GPU util %s), held-out verification %.1f s\n",
              out.wall_s, out.baseline_s, out.baseline_reused ? " (verified in an earlier run: reused)" : "", out.search_s,
              out.search_candidates, out.search_s > 0 ? out.search_candidates * 60.0 / out.search_s : 0.0,
              percent_or_na(out.search_gpu_busy).c_str(), evolve::gpu_util_text(out.search_gpu_util_nvml).c_str(), out.verify_s);
  if (ens && ens->size() > 1) std::printf("%s", ens->summary().c_str());
  if (!out.note.empty()) std::printf("%s\n", out.note.c_str());
  if (out.fake_evaluator) std::printf("(fake evaluator: no kernel was run)\n");
  if (out.baseline_reason == Reason::kNoGpu)
    std::fprintf(stderr, "kevo evolve: this host has no usable GPU, and evolve checks and times every kernel on one; "
                         "`kevo eval TASK KERNEL.cu --compile-only` compiles a kernel without one, and --fake-gpu runs "
                         "the loop on '// fake:' markers (a dry run that proves nothing about a kernel)\n");
  if (out.status == store::RunStatus::kInterrupted) {
    std::printf("interrupted; continue with: %s\n", resume_command(out.run_id, dbpath).c_str());
    return 130;
  }
  if (out.best_failed_held_out)
    std::printf("the best candidate %s, %.3fx on visible shapes, FAILED held-out re-verification: %s\n",
                ref_of(db, out.best_candidate).c_str(), out.best_speedup,
                out.verification.empty() ? "" : out.verification.front().message.c_str());
  if (out.winner) {
    std::printf("winner %s: %.3fx over the baseline, re-verified on held-out shapes with a fresh seed%s\n",
                ref_of(db, out.winner).c_str(), out.winner_speedup,
                out.best_failed_held_out ? " (a runner-up)" : "");
    for (const auto& v : out.verification)
      if (v.candidate == out.winner && !v.pytorch_line.empty()) std::printf("%s", v.pytorch_line.c_str());
    const std::string resume = resume_command(out.run_id, dbpath);  // " DB", quoted for a shell where needed
    const std::string db_arg = resume.substr(resume.find(" --db ") + 5);
    std::printf("next: kevo show %lld --db%s (the run, its lineage), kevo export %lld --db%s (the kernel, with a "
                "host example; --torch DIR for a PyTorch extension)\n",
                static_cast<long long>(out.run_id), db_arg.c_str(), static_cast<long long>(out.run_id), db_arg.c_str());
    return out.status == store::RunStatus::kFailed ? 3 : 0;
  }
  if (out.not_faster) {
    const auto& v = out.verification.back();
    std::printf("no faster kernel found; the baseline stands (%s passed held-out re-verification at %.3fx "
                "[%.3f, %.3f]: not above 1)\n",
                ref_of(db, v.candidate).c_str(), v.speedup, v.speedup_lo, v.speedup_hi);
    return out.status == store::RunStatus::kFailed ? 3 : 1;
  }
  std::printf(out.candidates ? "no candidate passed held-out re-verification: no winner\n"
                             : "no candidate was evaluated: no winner\n");
  return out.status == store::RunStatus::kFailed ? 3 : 1;
}

int evolve_fail(const std::string& msg, int code = 2) {
  std::fprintf(stderr, "kevo evolve: %s\n", msg.c_str());
  return code;
}

// Every GPU this host evaluates on answers a runner's hello before a run is recorded: on a host
// without one the baseline would fail and leave a failed run behind at every try.
Status probe_gpus(const PoolArgs& pool, bool fake_gpu) {
  if (fake_gpu) return {};
  auto gpus = evolve::parse_gpus(pool.gpus);
  if (!gpus) return gpus.unexpected();
  for (const std::string& gpu : *gpus)
    if (auto h = probe_gpu(gpu); !h)
      return fail("{}: no usable GPU ({}); nothing was recorded. evolve checks and times every kernel on a GPU: "
                  "`kevo eval TASK KERNEL.cu --compile-only` compiles a kernel without one, --gpus none with "
                  "--queue leaves the evaluations to `kevo worker`s elsewhere, and --fake-gpu runs the loop on "
                  "'// fake:' markers (a dry run that proves nothing about a kernel)",
                  gpu.empty() ? "the default GPU" : "GPU " + gpu, h.error().message);
  return {};
}

int run_evolve(const EvolveArgs& a, CLI::App* cmd) {
  const std::string dbpath = db_or_default(a.db);
  auto db = store::RunDb::open(dbpath);
  if (!db) return evolve_fail(db.error().message);
  auto plan = plan_evolve(a, cmd, **db);
  if (!plan) return evolve_fail(plan.error().message);
  const EvolveLaunch& launch = plan->launch;
  auto agents = models_are_agents(launch.models);
  if (!agents) return evolve_fail(agents.error().message);
  // An agent CLI brings its own model: no LLM configuration is read for it.
  auto lcfg = *agents ? Result<llm::LlmConfig>(llm::LlmConfig{})
                      : llm_config_of(launch.llm_toml, launch.overrides, launch.models, launch.llm_mode);
  if (!lcfg) return evolve_fail(lcfg.error().message);
  auto events = events_of(a);
  if (!events) return evolve_fail(events.error().message);
  auto models = *agents ? Result<Models>(Models{}) : models_of(*lcfg, **db, plan->opts.seed, launch.verifier_model);
  if (!models) return evolve_fail(models.error().message);
  if (auto ping = *agents ? Status{} : ping_models(*lcfg); !ping) return evolve_fail(ping.error().message, 3);
  if (auto probed = probe_gpus(launch.pool, launch.fake_gpu); !probed) return evolve_fail(probed.error().message, 3);
  auto evaluator = make_evaluator_said(launch.fake_gpu, "kevo evolve");
  llm::Ensemble* ens = models->ensemble.get();
  const Task& task = plan->task;
  std::fprintf(stderr, "kevo evolve: run database %s\n", (*db)->where().c_str());
  if (!(*db)->backup().empty())
    std::fprintf(stderr, "kevo evolve: upgraded its schema; the file as it was is kept in %s\n",
                 (*db)->backup().c_str());

  SignalGuard sigint(SIGINT, on_evolve_sigint);
  // A task imported from PyTorch has no baseline.cu until the translate stage writes one.
  if (!plan->resumed && !task.has_baseline()) {
    std::fprintf(stderr, "kevo evolve: task '%s' has no baseline.cu: translating its PyTorch reference first\n",
                 task.name.c_str());
    evolve::TranslateOptions t;
    t.eval = plan->opts.eval;
    if (int rc = translate_and_report("kevo evolve", task, *evaluator, **db, ens, g_evolve_cancel, t, true); rc != 0) return rc;
  }
  auto pool = pool_of(launch.pool, launch.fake_gpu, cmd, **db, task, dbpath, "kevo evolve");
  if (!pool) return evolve_fail(pool.error().message);
  auto gpu_util = gpu_util_of(launch.pool, launch.fake_gpu, "kevo evolve");
  std::unique_ptr<evolve::EpisodeRunner> episodes;
  if (*agents) {
    auto m = agent_mutator(launch.models.front(), task, *evaluator, **db);
    if (!m) return evolve_fail(m.error().message);
    episodes = std::move(*m);
  } else if (plan->opts.strategy.mutator == evolve::Mutator::kAgent) {
    if (!ens) return evolve_fail("--mutator agent needs a model (--model PROVIDER:MODEL): its episodes are that model's");
    episodes = llm_mutator(plan->opts.strategy.episode, task, *evaluator, *ens);
  }
  evolve::Engine engine(task, *evaluator, **db, ens, ens, g_evolve_cancel);
  engine.set_episodes(episodes.get());
  engine.set_pool(pool->get());
  engine.set_verifier(models->verifier.get());
  engine.set_gpu_util(gpu_util.get());
  StatusPrinter printer(a.quiet);
  engine.set_progress([&](const evolve::Progress& p) { printer(p); });
  if (*events) engine.set_events(events->get());
  auto out = plan->resumed ? engine.resume(plan->resumed->id, plan->opts) : engine.start(plan->opts);
  sigint.restore();
  printer.end();
  if (!out) return evolve_fail(out.error().message, 3);
  return report_evolve(*out, task, **db, dbpath, ens);
}

}  // namespace

void register_evolve(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "evolve",
      "Evolve a faster kernel for TASK with LLM proposals under the checker (docs/EVOLVE.md).\n"
      "Exit codes: 0 a winner re-verified on held-out shapes, 1 no verified winner, 2 bad arguments,\n"
      "3 the run failed, 130 interrupted (continue with --resume RUN).");
  auto a = std::make_shared<EvolveArgs>();
  std::string presets;
  for (const auto& n : evolve::preset_names()) presets += (presets.empty() ? "" : ", ") + n;
  cmd->add_option("task", a->task, "Task directory or bundled task name");
  cmd->add_option("--strategy", a->strategy, "Preset: " + presets);
  cmd->add_option("--model", a->models,
                  "Model spec (repeat for an ensemble); an agent CLI (claude-code:MODEL, codex:MODEL, "
                  "command:TEMPLATE) makes each proposal an episode of it (docs/AGENTS.md); none: offline tuning");
  cmd->add_option("--mutator", a->mutator,
                  "single: one model answer per proposal; agent: each proposal an episode in which the model calls "
                  "kevo's tools (compile, evaluate, profile, submit) before it answers (default: the strategy's)")
      ->check(CLI::IsMember({"single", "agent"}));
  cmd->add_option("--budget-candidates", a->budget_candidates, "Candidates to complete (default 45)")
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--budget-calls", a->budget_calls, "LLM calls")->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  cmd->add_option("--budget-tokens", a->budget_tokens, "LLM tokens (input + output)");
  cmd->add_option("--budget-usd", a->budget_usd, "Money for LLM calls");
  cmd->add_option("--budget-minutes", a->budget_minutes, "Wall time of this session");
  cmd->add_option("--stop-at-sol", a->stop_at_sol,
                  "Stop once the best is within this fraction of the speed-of-light floor (e.g. 0.85)")
      ->check(CLI::Range(0.01, 1.0));
  cmd->add_option("--parallel", a->parallel, "Proposals in flight")->check(CLI::Range(1, 256));
  cmd->add_option("--db", a->db, "Run database (default $KEVO_DB or ~/.local/share/kevo/runs.db)");
  cmd->add_option("--resume", a->resume, "Continue run RUN with its stored population and options");
  cmd->add_option("--events", a->events, "Machine-readable events: --events jsonl FILE")->expected(1, 2);
  cmd->add_option("--llm", a->llm_mode, "LLM answers: live, cache (default) or replay (offline)");
  cmd->add_option("-c,--config", a->config_file, "TOML file: [llm] table (docs/LLM.md) and [evolve] table")
      ->check(CLI::ExistingFile);
  cmd->add_option("--set", a->overrides, "Override an LLM config key, e.g. --set budget.max_cost_usd=2");
  cmd->add_option("--seed", a->seed, "Seed for parent and operator choices");
  cmd->add_option("--seeds", a->seeds, "Checker seeds per configuration")->check(CLI::Range(1, 100));
  cmd->add_option("--time-budget", a->time_budget, "Seconds per timing session in the search (default 1)")
      ->check(CLI::Range(0.1, 600.0));
  cmd->add_option("--verify-time-budget", a->verify_time_budget,
                  "Seconds per timing session when the finalists are re-timed on held-out shapes (default 4)")
      ->check(CLI::Range(0.1, 600.0));
  add_pool_options(cmd, a->pool);
  cmd->add_flag("--reverify-baseline", a->reverify_baseline,
                "Check the baseline again even if an earlier run verified it with this task, GPU, toolkit and kevo");
  cmd->add_flag("--profile", a->profile,
                "Profile the baseline and every passing candidate with Nsight Compute (ncu) after its verdict");
  cmd->add_flag("--no-race", a->no_race,
                "Time every candidate to full precision (by default one clearly below the best so far, or "
                "the baseline, stops after 4 rounds)");
  cmd->add_flag("--no-profile-feedback", a->no_profile_feedback,
                "Leave the parents' profile diagnosis out of prompts (to compare its effect)");
  cmd->add_option("--verifier-model", a->verifier_model,
                  "LLM verifier: this model reviews each candidate before it is compiled; its answers are recorded "
                  "next to the checker's verdicts (kevo show prints the matrix) and decide nothing");
  cmd->add_flag("--quiet", a->quiet, "No status line");
  cmd->add_flag("--fake-gpu", a->fake_gpu, "Test only: verdicts from '// fake:' markers, no GPU")->group("");
  cmd->callback([a, cmd, &exit_code] { exit_code = run_evolve(*a, cmd); });
}

}  // namespace kevo::cli
