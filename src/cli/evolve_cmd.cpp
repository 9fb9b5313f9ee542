// `kevo evolve`, `kevo translate`, `kevo runs`, `kevo show RUN`, `kevo export RUN [--torch DIR]`:
// the evolution engine and its run database (docs/EVOLVE.md, docs/INTEROP.md).
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/evaluator_factory.h"
#include "cli/evolve_launch.h"
#include "cli/pool_args.h"
#include "cli/signal_guard.h"
#include "cli/task_arg.h"
#include "check/evaluator.h"
#include "check/profile_diagnosis.h"
#include "evolve/engine.h"
#include "evolve/eval_pool.h"
#include "evolve/task_context.h"
#include "evolve/translate.h"
#include "interop/export.h"
#include "interop/standalone_export.h"
#include "llm/client.h"
#include "llm/config.h"
#include "llm/ensemble.h"
#include "llm/errors.h"
#include "results/verifier_matrix.h"
#include "store/run_db.h"
#include "util/fs.h"
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

std::string default_db() {
  if (const char* p = std::getenv("KEVO_DB"); p && *p) return p;
  if (const char* x = std::getenv("XDG_DATA_HOME"); x && *x) return std::string(x) + "/kevo/runs.db";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.local/share/kevo/runs.db";
  return "kevo-runs.db";
}

struct EvolveArgs {
  std::string task, strategy = "kevo-default", db, config_file, llm_mode, events_file, verifier_model;
  std::vector<std::string> models, overrides, events;
  int budget_candidates = 0, parallel = 0, seeds = 3;
  int64_t budget_calls = 0, budget_tokens = 0, resume = 0;
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

// Runs the translate stage and prints what happened; returns 0 when baseline.cu was written, else
// the exit code for `prog` (2: bad arguments such as no model, 1: every round failed, 3: the LLM
// failed or the checker could not run a kernel (no usable GPU), 130: interrupted).
int translate_and_report(const char* prog, const Task& task, evolve::CandidateEvaluator& evaluator, store::RunDb& db,
                         llm::LlmClient* llm, const evolve::TranslateOptions& o, bool failed_rounds_fatal) {
  auto r = evolve::translate(task, evaluator, db, llm, g_evolve_cancel, o);
  if (!r) {
    std::fprintf(stderr, "%s: %s\n", prog, r.error().message.c_str());
    return 2;
  }
  for (const auto& at : r->attempts)
    std::fprintf(stderr, "%s: translate round %d: %s%s%s (candidate #%lld)\n", prog, at.round, to_string(at.outcome),
                 at.reason.empty() ? "" : " ", at.reason.c_str(), static_cast<long long>(at.candidate));
  switch (r->status) {
    case evolve::TranslateStatus::kTranslated:
      std::printf("translated %s (run %lld, candidate #%lld, round %zu of %d): wrote %s\n",
                  task.torch_reference.c_str(), static_cast<long long>(r->run_id),
                  static_cast<long long>(r->candidate), r->attempts.size(), o.rounds, r->baseline.c_str());
      return 0;
    case evolve::TranslateStatus::kRoundsExhausted:
      std::fprintf(stderr, "%s: translation failed: %s\n", prog, r->message.c_str());
      return failed_rounds_fatal ? 3 : 1;
    case evolve::TranslateStatus::kLlmFailed:
      std::fprintf(stderr, "%s: translation failed: %s\n", prog, r->message.c_str());
      return 3;
    case evolve::TranslateStatus::kInfraFailed:
      std::fprintf(stderr, "%s: stopped, nothing more was asked of the model: %s\n", prog, r->message.c_str());
      return 3;
    case evolve::TranslateStatus::kInterrupted:
      std::fprintf(stderr, "%s: interrupted (run %lld)\n", prog, static_cast<long long>(r->run_id));
      return 130;
  }
  return 3;
}

// The LLM settings a config file holds, as text ("" when it has none: LLM keys sit under [llm],
// and a file holding only [evolve] has none).
Result<std::string> llm_toml_of(const std::string& config_file) {
  if (config_file.empty()) return std::string();
  auto has_llm = evolve::toml_has_table(config_file, "llm");
  if (!has_llm) return has_llm.unexpected();
  auto has_evolve = evolve::toml_has_table(config_file, "evolve");
  if (!has_evolve) return has_evolve.unexpected();
  if (!*has_llm && *has_evolve) return std::string();
  return read_file(config_file);
}

// The LLM settings: defaults, then a config file's (llm_toml_of), then --set, --model, --llm.
Result<llm::LlmConfig> llm_config_of(const std::string& llm_toml, const std::vector<std::string>& overrides,
                                     const std::vector<std::string>& models, const std::string& llm_mode) {
  llm::LlmConfig lcfg = llm::default_config();
  if (!llm_toml.empty()) {
    auto c = llm::parse_config(llm_toml, lcfg);
    if (!c) return c.unexpected();
    lcfg = *c;
  }
  for (const auto& s : overrides) KEVO_TRY(llm::apply_override(lcfg, s));
  if (!models.empty()) lcfg.models = models;
  if (!llm_mode.empty()) {
    auto m = llm::parse_cache_mode(llm_mode);
    if (!m) return m.unexpected();
    lcfg.cache = *m;
  }
  return lcfg;
}

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
  if (!resumed) opts.budgets.max_candidates = opts.strategy.max_candidates;
  if (cmd->count("--budget-candidates")) opts.budgets.max_candidates = a.budget_candidates;
  if (cmd->count("--budget-calls")) opts.budgets.max_calls = a.budget_calls;
  if (cmd->count("--budget-tokens")) opts.budgets.max_tokens = a.budget_tokens;
  if (cmd->count("--budget-usd")) opts.budgets.max_usd = a.budget_usd;
  if (cmd->count("--budget-minutes")) opts.budgets.max_minutes = a.budget_minutes;
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

// The model (or ensemble) on the run database's answer cache; none configured: null (offline).
struct Models {
  std::shared_ptr<llm::ResponseCache> cache;
  std::unique_ptr<llm::Ensemble> ensemble;
  std::unique_ptr<llm::LlmClient> verifier;  // --verifier-model: shares the context (budget, cache)
};

Result<Models> models_of(const llm::LlmConfig& lcfg, store::RunDb& db, uint64_t seed,
                         const std::string& verifier_model = "") {
  Models m;
  if (lcfg.models.empty()) {
    if (!verifier_model.empty()) return fail("--verifier-model needs a proposing model (--model or [llm] models)");
    return m;
  }
  auto c = db.handle() ? llm::ResponseCache::attach(db.handle())
                       : llm::ResponseCache::open((cache_dir() / "llm_cache.sqlite").string());
  if (!c) return c.unexpected();
  m.cache = std::move(*c);
  auto ctx = llm::make_context(lcfg, {.cache = m.cache, .seed = seed});
  auto e = llm::make_ensemble(ctx);
  if (!e) return e.unexpected();
  m.ensemble = std::move(*e);
  if (!verifier_model.empty()) {
    auto v = llm::make_client(verifier_model, ctx);
    if (!v) return fail("--verifier-model: {}", v.error().message);
    m.verifier = std::move(*v);
  }
  return m;
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

// The summary of a finished engine run; returns the exit code.
int report_evolve(const evolve::RunOutcome& out, const Task& task, const std::string& dbpath, const llm::Ensemble* ens) {
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
    std::printf("the best candidate #%lld (%.3fx on visible shapes) FAILED held-out re-verification: %s\n",
                static_cast<long long>(out.best_candidate), out.best_speedup,
                out.verification.empty() ? "" : out.verification.front().message.c_str());
  if (out.winner) {
    std::printf("winner #%lld: %.3fx over the baseline, re-verified on held-out shapes with a fresh seed%s\n",
                static_cast<long long>(out.winner), out.winner_speedup,
                out.best_failed_held_out ? " (a runner-up)" : "");
    for (const auto& v : out.verification)
      if (v.candidate == out.winner && !v.pytorch_line.empty()) std::printf("%s", v.pytorch_line.c_str());
    const std::string resume = resume_command(out.run_id, dbpath);  // " DB", quoted for a shell where needed
    const std::string db = resume.substr(resume.find(" --db ") + 5);
    std::printf("next: kevo show %lld --db%s (the run, its lineage), kevo export %lld --db%s (the kernel, with a "
                "host example; --torch DIR for a PyTorch extension)\n",
                static_cast<long long>(out.run_id), db.c_str(), static_cast<long long>(out.run_id), db.c_str());
    return out.status == store::RunStatus::kFailed ? 3 : 0;
  }
  if (out.not_faster) {
    const auto& v = out.verification.back();
    std::printf("no faster kernel found; the baseline stands (#%lld passed held-out re-verification at %.3fx "
                "[%.3f, %.3f]: not above 1)\n",
                static_cast<long long>(v.candidate), v.speedup, v.speedup_lo, v.speedup_hi);
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
  const std::string dbpath = a.db.empty() ? default_db() : a.db;
  auto db = store::RunDb::open(dbpath);
  if (!db) return evolve_fail(db.error().message);
  auto plan = plan_evolve(a, cmd, **db);
  if (!plan) return evolve_fail(plan.error().message);
  const EvolveLaunch& launch = plan->launch;
  auto lcfg = llm_config_of(launch.llm_toml, launch.overrides, launch.models, launch.llm_mode);
  if (!lcfg) return evolve_fail(lcfg.error().message);
  auto events = events_of(a);
  if (!events) return evolve_fail(events.error().message);
  auto models = models_of(*lcfg, **db, plan->opts.seed, launch.verifier_model);
  if (!models) return evolve_fail(models.error().message);
  if (auto ping = ping_models(*lcfg); !ping) return evolve_fail(ping.error().message, 3);
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
    if (int rc = translate_and_report("kevo evolve", task, *evaluator, **db, ens, t, true); rc != 0) return rc;
  }
  auto pool = pool_of(launch.pool, launch.fake_gpu, cmd, **db, task, dbpath, "kevo evolve");
  if (!pool) return evolve_fail(pool.error().message);
  auto gpu_util = gpu_util_of(launch.pool, launch.fake_gpu, "kevo evolve");
  evolve::Engine engine(task, *evaluator, **db, ens, ens, g_evolve_cancel);
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
  return report_evolve(*out, task, dbpath, ens);
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
  const std::string dbpath = a.db.empty() ? default_db() : a.db;
  auto db = store::RunDb::open(dbpath);
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
  SignalGuard sigint(SIGINT, on_evolve_sigint);
  return translate_and_report("kevo translate", *task, *evaluator, **db, models->ensemble.get(), o, false);
}

json final_of(const store::RunRow& r) {
  json j = json::parse(r.final_json.empty() ? "{}" : r.final_json, nullptr, false);
  return j.is_object() ? j : json::object();
}

std::string fmt_time(double unix_s) {
  std::time_t t = static_cast<std::time_t>(unix_s);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", std::localtime(&t));
  return buf;
}

int runs_cmd(const std::string& dbpath) {
  auto db = store::RunDb::open_read_only(dbpath.empty() ? default_db() : dbpath);
  if (!db) {
    std::fprintf(stderr, "kevo runs: %s\n", db.error().message.c_str());
    return 2;
  }
  auto runs = (*db)->list_runs();
  if (!runs) {
    std::fprintf(stderr, "kevo runs: %s\n", runs.error().message.c_str());
    return 2;
  }
  std::printf("%-5s %-16s %-20s %-20s %-12s %6s %6s %8s %-10s\n", "run", "started", "task", "strategy", "status",
              "cands", "valid", "best", "held-out");
  bool any_fake = false;
  for (const auto& r : *runs) {
    auto t = (*db)->totals(r.id);
    json f = final_of(r);
    std::string verified = f.empty() ? "-" : f.value("winner", 0) ? "ok" : "no winner";
    if (f.value("best_failed_held_out", false)) verified = "best FAILED";
    if (evolve::run_was_fake(r)) verified += " FAKE";
    any_fake |= evolve::run_was_fake(r);
    std::printf("%-5lld %-16s %-20s %-20s %-12s %6lld %6lld %8s %-10s\n", static_cast<long long>(r.id),
                fmt_time(r.created_at).c_str(), r.task.c_str(), r.strategy.c_str(), store::to_string(r.status),
                static_cast<long long>(t ? t->candidates : 0), static_cast<long long>(t ? t->valid : 0),
                r.best_speedup > 0 ? fmt::format("{:.3f}x", r.best_speedup).c_str() : "-", verified.c_str());
  }
  if (any_fake) std::printf("FAKE: a --fake-gpu run: its verdicts and speedups come from '// fake:' markers, no kernel was run\n");
  return 0;
}

// `kevo show RUN --candidate ID`: prompt, answer, source, and the profile when there is one.
void show_candidate(const store::CandidateRow& c, int64_t run, bool as_json) {
  if (as_json) {
    json j = {{"id", c.id}, {"seq", c.seq}, {"operator", c.op}, {"parents", c.parents}, {"model", c.model},
              {"prompt", c.prompt}, {"answer", c.answer}, {"source", c.source}, {"outcome", to_string(c.outcome)},
              {"reason", c.reason}, {"message", c.message},
              {"verdict", json::parse(c.verdict_json.empty() ? "null" : c.verdict_json, nullptr, false)}};
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  std::printf("candidate #%lld (run %lld, seq %d, %s, parents %s, model %s)\n", static_cast<long long>(c.id),
              static_cast<long long>(run), c.seq, c.op.c_str(), json(c.parents).dump().c_str(), c.model.c_str());
  std::printf("outcome: %s %s %s\n", to_string(c.outcome), c.reason.c_str(), c.message.c_str());
  if (c.speedup > 0) std::printf("speedup: %.3fx [%.3f, %.3f]\n", c.speedup, c.speedup_lo, c.speedup_hi);
  std::printf("\n--- prompt ---\n%s\n\n--- answer ---\n%s\n\n--- source ---\n%s\n", c.prompt.c_str(),
              c.answer.c_str(), c.source.c_str());
  auto v = json::parse(c.verdict_json.empty() ? "{}" : c.verdict_json, nullptr, false);
  if (!v.is_object() || !v.contains("profile")) return;
  auto p = profile_from_json(v["profile"]);
  if (!p) {
    std::printf("\n--- profile ---\n(unreadable: %s)\n", p.error().message.c_str());
    return;
  }
  std::string d = diagnose_profile(*p);
  std::printf("\n--- profile (Nsight Compute on config '%s'; advice, not part of the verdict) ---\n%s%s%s\n",
              p->config.c_str(), p->to_text().c_str(), d.empty() ? "" : "diagnosis: ", d.c_str());
}

// A model as 16 columns show it: the model's name, not the server's address it is reached at
// ("http://127.0.0.1:8080/v1#qwen" is "qwen"), its end where it is still too long.
std::string model_column(const std::string& model) {
  std::string m = model;
  if (auto hash = m.rfind('#'); hash != std::string::npos) m = m.substr(hash + 1);
  else if (m.find("://") != std::string::npos) m = m.substr(m.rfind('/') + 1);
  return m.size() <= 16 ? m : "~" + m.substr(m.size() - 15);
}

int show_cmd(const std::string& dbpath, int64_t run, int64_t candidate, bool as_json) {
  auto db = store::RunDb::open_read_only(dbpath.empty() ? default_db() : dbpath);
  if (!db) {
    std::fprintf(stderr, "kevo show: %s\n", db.error().message.c_str());
    return 2;
  }
  auto r = (*db)->get_run(run);
  if (!r) {
    std::fprintf(stderr, "kevo show: %s\n", r.error().message.c_str());
    return 2;
  }
  auto cands = (*db)->candidates(run);
  if (!cands) {
    std::fprintf(stderr, "kevo show: %s\n", cands.error().message.c_str());
    return 2;
  }
  if (candidate) {
    for (const auto& c : *cands)
      if (c.id == candidate) {
        show_candidate(c, run, as_json);
        return 0;
      }
    std::fprintf(stderr, "kevo show: run %lld has no candidate %lld\n", static_cast<long long>(run),
                 static_cast<long long>(candidate));
    return 2;
  }
  json f = final_of(*r);
  if (as_json) {
    json cs = json::array();
    for (const auto& c : *cands)
      cs.push_back({{"id", c.id}, {"seq", c.seq}, {"operator", c.op}, {"parents", c.parents},
                    {"generation", c.generation}, {"island", c.island}, {"model", c.model},
                    {"outcome", to_string(c.outcome)}, {"reason", c.reason}, {"speedup", c.speedup}, {"speedup_ci", {c.speedup_lo, c.speedup_hi}},
                    {"accepted", c.accepted}, {"name", c.name}});
    json j = {{"run", r->id}, {"task", r->task}, {"strategy", r->strategy}, {"status", store::to_string(r->status)},
              {"stop_reason", r->stop_reason}, {"best_candidate", r->best_candidate},
              {"best_speedup", r->best_speedup}, {"final", f}, {"note", r->note},
              {"baseline", json::parse(r->baseline_json.empty() ? "null" : r->baseline_json, nullptr, false)},
              {"candidates", cs}};
    if (auto ev = (*db)->events(run); ev)
      if (auto m = results::verifier_matrix(*ev, *cands); m.calls > 0) j["verifier"] = m.to_json();
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  std::printf("run %lld  task %s  strategy %s  %s%s%s\n", static_cast<long long>(r->id), r->task.c_str(),
              r->strategy.c_str(), store::to_string(r->status), r->stop_reason.empty() ? "" : "  stop: ",
              r->stop_reason.c_str());
  json base = json::parse(r->baseline_json.empty() ? "{}" : r->baseline_json, nullptr, false);
  if (base.is_object() && base.contains("time_ms"))
    std::printf("baseline %.4g ms on %s%s\n", base.value("time_ms", 0.0), base.value("gpu", "?").c_str(),
                base.value("fake_evaluator", false) ? "  (FAKE evaluator: nothing was run on a GPU)" : "");
  if (auto a = evolve::profile_advice(r->baseline_json); !a.diagnosis.empty() || !a.not_profiled.empty())
    std::printf("baseline profile: %s\n", (a.diagnosis.empty() ? "not profiled: " + a.not_profiled : a.diagnosis).c_str());
  if (!r->note.empty()) std::printf("note: %s\n", r->note.c_str());
  std::printf("\n%-6s %-4s %-10s %-12s %-4s %-3s %-16s %-15s %-20s %-22s\n", "id", "seq", "operator", "parents", "gen",
              "isl", "model", "outcome", "reason", "speedup [95% CI]");
  for (const auto& c : *cands) {
    std::string parents;
    for (auto p : c.parents) parents += (parents.empty() ? "" : ",") + std::to_string(p);
    std::string sp = c.speedup > 0 ? fmt::format("{:.3f}x [{:.3f},{:.3f}]{}", c.speedup, c.speedup_lo, c.speedup_hi,
                                                 c.accepted ? " *" : "")
                                   : "-";
    std::printf("%-6lld %-4d %-10s %-12s %-4d %-3d %-16.16s %-15s %-20.20s %-22s\n", static_cast<long long>(c.id),
                c.seq, c.op.c_str(), parents.empty() ? "baseline" : parents.c_str(), c.generation, c.island,
                model_column(c.model).c_str(), to_string(c.outcome), c.reason.c_str(), sp.c_str());
  }
  std::printf("(* = became the best, with confidence)\n");
  if (auto ev = (*db)->events(run); ev) {
    std::string m = results::verifier_matrix(*ev, *cands).to_text();
    if (!m.empty()) std::printf("\n%s", m.c_str());
  }
  if (f.contains("attempts")) {
    std::printf("\nheld-out re-verification (fresh seed):\n");
    for (const auto& at : f["attempts"])
      std::printf("  #%lld: %s %s %s%s\n", static_cast<long long>(at.value("candidate", int64_t{0})),
                  at.value("outcome", "").c_str(), at.value("reason", "").c_str(), at.value("message", "").c_str(),
                  at.value("speedup", 0.0) > 0 ? fmt::format("  re-timed {:.3f}x", at.value("speedup", 0.0)).c_str() : "");
    if (f.value("best_failed_held_out", false)) std::printf("  the best candidate FAILED held-out verification\n");
  }
  if (f.contains("winner_pytorch") && f["winner_pytorch"].contains("pytorch")) {
    const auto& w = f["winner_pytorch"];
    const auto& pt = w["pytorch"];
    std::string line;
    for (const auto& [mode, label] : {std::pair{"eager", "eager"}, {"compile", "torch.compile"}, {"extension", "extension"}}) {
      std::string ms = std::string(mode) + "_ms", sp = std::string("speedup_vs_") + mode;
      if (!pt.contains(ms) || !pt[ms].is_number()) continue;
      line += fmt::format("{}{} {:.4f} ms", line.empty() ? "" : ", ", label, pt[ms].get<double>());
      if (w.contains(sp) && w[sp].is_number()) line += fmt::format(" (winner {:.2f}x)", w[sp].get<double>());
    }
    if (!line.empty()) std::printf("the winner vs PyTorch (same GPU, same inputs): %s\n", line.c_str());
  }
  int64_t shown = f.value("winner", int64_t{0});
  if (!shown) shown = r->best_candidate;
  if (shown) {
    // Lineage: follow the first parent back to the baseline.
    std::string chain;
    for (int64_t id = shown; id;) {
      const store::CandidateRow* c = nullptr;
      for (const auto& x : *cands)
        if (x.id == id) c = &x;
      if (!c) break;
      chain += fmt::format("#{} ({}{}) <- ", c->id, c->op, c->name.empty() ? "" : ", " + c->name);
      id = c->parents.empty() ? 0 : c->parents.front();
    }
    std::printf("\nlineage of %s #%lld: %sbaseline\n", f.value("winner", int64_t{0}) ? "the winner" : "the best",
                static_cast<long long>(shown), chain.c_str());
    for (const auto& c : *cands)
      if (c.id == shown) {
        if (!c.rationale.empty()) std::printf("idea: %s\n", c.rationale.c_str());
        if (auto a = evolve::profile_advice(c.verdict_json); !a.diagnosis.empty())
          std::printf("profile: %s\n", a.diagnosis.c_str());
        std::printf("\n%s\n", c.source.c_str());
      }
  }
  return 0;
}

// `--torch DIR`: the kernel as a PyTorch extension (interop::export_torch, docs/INTEROP.md).
int export_torch_cmd(const Task& task, const std::string& source, const std::string& prov, const std::string& dir) {
  // export_torch copies a kernel file: the candidate goes through a private temporary one.
  std::error_code ec;
  auto tmp = std::filesystem::temp_directory_path(ec) / fmt::format("kevo-export-torch-{}", ::getpid());
  std::filesystem::create_directories(tmp, ec);
  if (ec) {
    std::fprintf(stderr, "kevo export: cannot create %s: %s\n", tmp.c_str(), ec.message().c_str());
    return 2;
  }
  Status s = write_file_atomic(tmp / "kernel.cu", "// " + prov + "\n" + source);
  if (s) s = interop::export_torch(task, tmp / "kernel.cu", dir);
  std::filesystem::remove_all(tmp, ec);
  if (!s) {
    std::fprintf(stderr, "kevo export: --torch: %s\n", s.error().message.c_str());
    return 2;
  }
  std::printf("wrote %s/{kernel.cu, kevo/kernel.h, ext.cpp, loader.py, test_ext.py}\n"
              "check it on a GPU machine with torch: python3 %s/test_ext.py\n",
              dir.c_str(), dir.c_str());
  return 0;
}

// An export writes into a folder of its own: one that holds anything already is replaced only with
// --force (as import asks), so a second export cannot silently overwrite the first.
Status free_for_export(const std::string& dir, bool force) {
  std::error_code ec;
  if (force || dir.empty() || !std::filesystem::exists(dir, ec)) return {};
  if (std::filesystem::is_directory(dir, ec) && std::filesystem::is_empty(dir, ec)) return {};
  return fail("{} exists and is not empty: --force writes the export over what is there", dir);
}

int export_cmd(const std::string& dbpath, int64_t run, int64_t candidate, const std::string& out_dir,
               const std::string& config, const std::string& arch, const std::string& torch_dir, bool force) {
  auto db = store::RunDb::open_read_only(dbpath.empty() ? default_db() : dbpath);
  if (!db) {
    std::fprintf(stderr, "kevo export: %s\n", db.error().message.c_str());
    return 2;
  }
  auto r = (*db)->get_run(run);
  if (!r) {
    std::fprintf(stderr, "kevo export: %s\n", r.error().message.c_str());
    return 2;
  }
  json f = final_of(*r);
  int64_t id = candidate ? candidate : field_or(f, "winner", int64_t{0});
  std::string status = candidate ? "chosen by hand" : "verified on held-out shapes";
  if (!id && r->strategy == "translate") {  // a translation's kernel, checked against its reference
    id = r->best_candidate;
    status = "translated from the PyTorch reference";
  }
  if (!id) {
    // No winner: nothing faster than the baseline was verified. Exporting one anyway is a choice.
    const char* why = field_or(f, "not_faster", false)          ? "no faster kernel was found; the baseline stands"
                      : field_or(f, "best_failed_held_out", false) ? "its best FAILED held-out verification"
                                                                 : "no candidate was verified on held-out shapes";
    std::fprintf(stderr, "kevo export: run %lld has no winner (%s); pass --candidate ID to export one anyway\n",
                 static_cast<long long>(run), why);
    return 1;
  }
  auto c = (*db)->candidate(id);
  if (!c || c->run_id != run) {
    std::fprintf(stderr, "kevo export: run %lld has no candidate %lld\n", static_cast<long long>(run),
                 static_cast<long long>(id));
    return 2;
  }
  auto task = load_task(r->task_dir);
  if (!task) {
    std::fprintf(stderr, "kevo export: %s\n", task.error().message.c_str());
    return 2;
  }
  std::string prov = fmt::format("kevo run {} candidate #{} for task '{}': {:.3f}x over the baseline ({})", run,
                                 id, r->task, c->speedup, status);
  // A fake run's figures are a marker's: an exported kernel must not carry them as a measurement.
  if (evolve::run_was_fake(*r)) {
    prov = fmt::format("kevo run {} candidate #{} for task '{}': FAKE evaluator (--fake-gpu): never run on a GPU, "
                       "neither checked nor timed; its {:.3f}x is a test marker's, not a measurement",
                       run, id, r->task, c->speedup);
    std::fprintf(stderr, "kevo export: run %lld used the fake evaluator (--fake-gpu): the kernel was never checked "
                         "or timed\n", static_cast<long long>(run));
  }
  std::string dir = out_dir.empty() ? fmt::format("kevo-export-{}-run{}", r->task, run) : out_dir;
  for (const std::string& d : {torch_dir, torch_dir.empty() || !out_dir.empty() ? dir : std::string()})
    if (auto st = free_for_export(d, force); !st) {
      std::fprintf(stderr, "kevo export: %s\n", st.error().message.c_str());
      return 2;
    }
  if (!torch_dir.empty()) {
    int rc = export_torch_cmd(*task, c->source, prov, torch_dir);
    if (rc != 0 || out_dir.empty()) return rc;  // -o as well: the standalone files too
  }
  auto files = interop::export_kernel(*task, c->source, prov, dir, config, arch);
  if (!files) {
    std::fprintf(stderr, "kevo export: %s\n", files.error().message.c_str());
    return 2;
  }
  std::printf("wrote %s, %s, %s\nbuild: cd %s && %s\n", files->kernel.c_str(), files->main.c_str(),
              files->header.c_str(), dir.c_str(), files->build_command.c_str());
  return 0;
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
  cmd->add_option("--model", a->models, "Model spec (repeat for an ensemble); none: offline tuning");
  cmd->add_option("--budget-candidates", a->budget_candidates, "Candidates to complete (default 45)")
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--budget-calls", a->budget_calls, "LLM calls")->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  cmd->add_option("--budget-tokens", a->budget_tokens, "LLM tokens (input + output)");
  cmd->add_option("--budget-usd", a->budget_usd, "Money for LLM calls");
  cmd->add_option("--budget-minutes", a->budget_minutes, "Wall time of this session");
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

  auto* runs = app.add_subcommand("runs", "List the runs in the run database");
  auto runs_db = std::make_shared<std::string>();
  runs->add_option("--db", *runs_db, "Run database");
  runs->callback([runs_db, &exit_code] { exit_code = runs_cmd(*runs_db); });

  auto* show = app.add_subcommand("show", "A run: per-candidate outcomes, held-out verification, lineage, best kernel");
  struct ShowArgs {
    std::string db;
    int64_t run = 0, candidate = 0;
    bool json = false;
  };
  auto sa = std::make_shared<ShowArgs>();
  show->add_option("run", sa->run, "Run id (kevo runs)")->required();
  show->add_option("--db", sa->db, "Run database");
  show->add_option("--candidate", sa->candidate, "Show one candidate: prompt, answer, source, verdict");
  show->add_flag("--json", sa->json, "JSON output");
  show->callback([sa, &exit_code] { exit_code = show_cmd(sa->db, sa->run, sa->candidate, sa->json); });

  auto* ex = app.add_subcommand("export", "Write a run's winning kernel as a standalone .cu with a host example");
  struct ExportArgs {
    std::string db, out, config, arch = "sm_90", torch;
    int64_t run = 0, candidate = 0;
    bool force = false;
  };
  auto ea = std::make_shared<ExportArgs>();
  ex->add_option("run", ea->run, "Run id (kevo runs)")->required();
  ex->add_option("--db", ea->db, "Run database");
  ex->add_option("-o,--out", ea->out, "Output directory (default kevo-export-TASK-runN)");
  ex->add_option("--candidate", ea->candidate, "Export this candidate instead of the winner");
  ex->add_option("--shape", ea->config, "Visible config the host example uses (default: the timed one)");
  ex->add_option("--arch", ea->arch, "Architecture in the build command");
  ex->add_option("--torch", ea->torch,
                 "Write a PyTorch extension to DIR instead (kernel, torch::Tensor wrapper, loader.py, test_ext.py); "
                 "with -o as well, both");
  ex->add_flag("--force", ea->force, "Write into an output directory that is not empty");
  ex->callback([ea, &exit_code] {
    exit_code = export_cmd(ea->db, ea->run, ea->candidate, ea->out, ea->config, ea->arch, ea->torch, ea->force);
  });

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
