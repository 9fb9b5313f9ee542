// The engine's top level: Engine::run runs the phases of evolve/run_state.h in order over one
// run's state; each phase reads and extends it, and the run's end is stored as its outcome.
#include "evolve/engine.h"

#include <filesystem>
#include <memory>
#include <system_error>

#include <fmt/format.h>

#include "evolve/run_state.h"
#include "evolve/stored_verdict.h"
#include "evolve/task_context.h"
#include "results/run_baseline.h"
#include "results/run_config.h"
#include "store/stop_reason.h"
#include "util/json_fields.h"

namespace kevo::evolve {

using nlohmann::json;

json Budgets::to_json() const {
  json j = {{"max_candidates", max_candidates}};
  if (max_calls) j["max_calls"] = *max_calls;
  if (max_tokens) j["max_tokens"] = *max_tokens;
  if (max_usd) j["max_usd"] = *max_usd;
  if (max_minutes) j["max_minutes"] = *max_minutes;
  if (stop_at_sol) j["stop_at_sol"] = *stop_at_sol;
  return j;
}

Result<Budgets> Budgets::from_json(const json& j) {
  Budgets b;
  JsonFields f(j, "budgets");
  b.max_candidates = f.get("max_candidates", b.max_candidates);
  auto opt = [&](const char* key, auto& out) {
    using T = typename std::remove_reference_t<decltype(out)>::value_type;
    if (j.is_object() && j.contains(key) && !j[key].is_null()) out = f.get<T>(key, T{});
  };
  opt("max_calls", b.max_calls);
  opt("max_tokens", b.max_tokens);
  opt("max_usd", b.max_usd);
  opt("max_minutes", b.max_minutes);
  opt("stop_at_sol", b.stop_at_sol);
  KEVO_TRY(f.status());
  return b;
}

Result<EngineOptions> options_of_run(const store::RunRow& run) {
  json j = json::parse(run.config_json, nullptr, false);
  if (!j.is_object()) return fail("run {}: its stored configuration is not a JSON object", run.id);
  const std::string where = fmt::format("run {}: stored configuration", run.id);
  JsonFields f(j, where);
  EngineOptions o;
  auto s = StrategyConfig::from_json(f.object("strategy"));
  if (!s) return fail("{}: {}", where, s.error().message);
  o.strategy = *s;
  auto b = Budgets::from_json(f.object("budgets"));
  if (!b) return fail("{}: {}", where, b.error().message);
  o.budgets = *b;
  o.seed = f.get("seed", uint64_t{0});
  o.eval.seeds = f.get("eval_seeds", o.eval.seeds);
  o.eval.time_budget_s = f.get("eval_time_budget_s", o.eval.time_budget_s);
  o.verify_time_budget_s = f.get("verify_time_budget_s", o.verify_time_budget_s);
  o.race_timing = f.get("race_timing", o.race_timing);
  o.eval.profile = f.get("eval_profile", o.eval.profile);
  if (j.contains("launch")) o.launch = f.object("launch");
  KEVO_TRY(f.status());
  return o;
}

bool run_was_fake(const store::RunRow& run) { return results::config_from_text(run.config_json).fake_evaluator; }

Status check_resume_evaluator(const store::RunRow& run, bool fake) {
  const bool was = run_was_fake(run);
  if (was == fake) return {};
  return fail("run {} was evaluated {}; resuming it {} would mix two evaluators in one run: resume it {} --fake-gpu, "
              "or start a new run",
              run.id, was ? "with --fake-gpu (no GPU)" : "on the GPU checker",
              was ? "on the GPU checker" : "with a fake evaluator", was ? "with" : "without");
}

std::string offline_note(bool found_tunables) {
  std::string head =
      found_tunables
          ? "No LLM configured: kevo searched the constants the kernel marks tunable "
            "(// kevo: tune NAME in {...})."
          : "No LLM configured and the baseline marks no tunable constants "
            "(annotate one: #define BLOCK 256  // kevo: tune BLOCK in {128, 256, 512}).";
  return head +
         " A model would do much more: rewrite the kernel, fuse, vectorize, use tensor cores. "
         "Configure one with --model (e.g. --model anthropic:claude-sonnet-4-5 with "
         "ANTHROPIC_API_KEY set, or --model http://localhost:8000/v1#qwen2.5-coder-32b for a "
         "local server) or an [llm] table in --config; see docs/LLM.md.";
}

namespace {

json or_null(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

// Budgets given now (e.g. a larger one) stay with a resumed run for its next resume.
void keep_budgets(store::RunRow& row, const Budgets& budgets) {
  json cfg = json::parse(row.config_json, nullptr, false);
  if (!cfg.is_object()) return;
  cfg["budgets"] = budgets.to_json();
  row.config_json = cfg.dump();
}

// Where the run's candidate files go: run-<id> in the options' work folder, else beside the database.
Result<std::filesystem::path> make_work_dir(const EngineOptions& opts, store::RunDb& db, int64_t run_id) {
  std::filesystem::path work = opts.work_dir;
  if (work.empty()) work = store::default_work_dir(db);
  work /= fmt::format("run-{}", run_id);
  std::error_code ec;
  std::filesystem::create_directories(work, ec);
  if (ec) return fail("cannot create {}: {}", work.string(), ec.message());
  return work;
}

// The run's end: its row stored with `st` and `stop`, the outcome's figures, a "finished" event.
Result<RunOutcome> finish(RunState& s, RunOutcome& out, store::RunStatus st, const store::StopReason& stop) {
  const std::string why = stop.text();
  s.row.status = st;
  s.row.stop_reason = why;
  KEVO_TRY(s.db.update_run(s.row));
  out.status = st;
  out.stop_reason = why;
  out.candidates = s.seq;
  out.valid = s.valid;
  out.best_candidate = s.pop.best() ? s.pop.best()->id : 0;
  out.best_speedup = s.pop.best() ? s.pop.best()->speed.value : 0;
  out.wall_s = since(s.t0);
  out.gpu_busy = s.busy_share(s.gpu_s, out.wall_s);
  if (s.gpu_util) out.gpu_util_nvml = s.gpu_util->mean_since(s.util_t0);
  out.note = s.row.note;
  s.emit("finished", {{"status", store::to_string(st)}, {"stop_reason", why}, {"candidates", out.candidates},
                      {"valid", out.valid}, {"best_candidate", out.best_candidate},
                      {"best_speedup", out.best_speedup}, {"winner", out.winner},
                      {"best_failed_held_out", out.best_failed_held_out}, {"not_faster", out.not_faster},
                      {"gpu_busy", out.gpu_busy}, {"gpu_util_nvml", or_null(out.gpu_util_nvml)},
                      {"search_s", out.search_s}, {"search_candidates", out.search_candidates},
                      {"search_evaluators_busy", out.search_gpu_busy},
                      {"search_gpu_util_nvml", or_null(out.search_gpu_util_nvml)}});
  s.report(0);
  return out;
}

// Between the baseline and the search: the prompts' task context, the baseline's program as one
// seen, a resumed run's candidates replayed, and the run said started.
Status start_search(RunState& s, const json& base, bool resumed) {
  s.ctx = make_task_context(s.task, baseline_verdict(results::baseline_from_json(base)), s.ev.cuda_version(), load_abi_text());
  if (!s.ctx.baseline_code.empty()) s.seen.emplace(s.ev.fingerprint(s.ctx.baseline_code), 0);
  KEVO_TRY(s.db.update_run(s.row));
  KEVO_TRY(replay_phase(s));
  s.phase = Progress::Phase::kSearch;
  s.phase_detail.clear();
  s.search_t0 = SteadyClock::now();
  s.search_seq0 = s.seq;
  s.emit(resumed ? "run_resumed" : "run_started",
         {{"task", s.task.name}, {"strategy", s.row.strategy}, {"completed", s.seq},
          {"budget", s.opts.budgets.max_candidates}, {"baseline", base}});
  return {};
}

// The search (the model's proposals, or offline tuning without one) and its own figures.
Status search(RunState& s, RunOutcome& out) {
  const auto t_search = SteadyClock::now();
  const double gpu_s_search0 = s.gpu_s;
  const auto util_search0 = s.gpu_util ? s.gpu_util->mark() : GpuUtilSampler::Mark{};
  if (s.llm || s.episodes) {
    KEVO_TRY(evolve_phase(s));
  } else {
    std::string note;
    KEVO_TRY(tune_phase(s, &note));
    s.row.note = note;
  }
  out.search_s = since(t_search);
  out.search_candidates = s.seq - s.search_seq0;
  if (out.search_s > 0) out.search_gpu_busy = s.busy_share(s.gpu_s - gpu_s_search0, out.search_s);
  if (s.gpu_util) out.search_gpu_util_nvml = s.gpu_util->mean_since(util_search0);
  return {};
}

// runs.final: the winner and every held-out attempt.
json final_json(const RunOutcome& out) {
  json fin = json::object();
  fin["winner"] = out.winner;
  fin["winner_speedup"] = out.winner_speedup;
  fin["best_failed_held_out"] = out.best_failed_held_out;
  fin["not_faster"] = out.not_faster;
  json att = json::array();
  for (const auto& a : out.verification)
    att.push_back({{"candidate", a.candidate}, {"outcome", outcome_name(a.outcome)}, {"reason", a.reason_text()},
                   {"message", a.message}, {"speedup", a.speedup}, {"speedup_ci", {a.speedup_lo, a.speedup_hi}}});
  fin["attempts"] = att;
  for (const auto& a : out.verification)
    if (a.candidate == out.winner && !a.pytorch.is_null()) fin["winner_pytorch"] = a.pytorch;
  return fin;
}

}  // namespace

Engine::Engine(const Task& task, CandidateEvaluator& evaluator, store::RunDb& db, llm::LlmClient* llm,
               llm::Ensemble* ensemble, const llm::CancelToken& cancel)
    : task_(task), evaluator_(evaluator), db_(db), llm_(llm), ensemble_(ensemble), cancel_(cancel) {}

Result<RunOutcome> Engine::start(const EngineOptions& opts) {
  store::RunRow row;
  row.task = task_.name;
  row.task_dir = std::filesystem::absolute(task_.dir).string();
  row.strategy = llm_ || episodes_ ? opts.strategy.name : "offline-tuning";
  json cfg = {{"strategy", opts.strategy.to_json()},
              {"budgets", opts.budgets.to_json()},
              {"seed", opts.seed},
              {"eval_seeds", opts.eval.seeds},
              {"eval_time_budget_s", opts.eval.time_budget_s},
              {"verify_time_budget_s", opts.verify_time_budget_s},
              {"race_timing", opts.race_timing},
              {"eval_profile", opts.eval.profile},
              {"llm", llm_ ? llm_->name() : episodes_ ? episodes_->name() : ""},
              {"fake_evaluator", evaluator_.is_fake()},
              {"launch", opts.launch}};
  row.config_json = cfg.dump();
  auto id = db_.create_run(row);
  if (!id) return id.unexpected();
  row.id = *id;
  return run(std::move(row), opts, false);
}

Result<RunOutcome> Engine::resume(int64_t run_id, const EngineOptions& opts) {
  auto row = db_.get_run(run_id);
  if (!row) return row.unexpected();
  if (row->task != task_.name)
    return fail("run {} is for task '{}', not '{}'", run_id, row->task, task_.name);
  // A translate run (or any run this engine did not make) has no population to continue.
  if (row->strategy == "translate")
    return fail("run {} is a `kevo translate` run, not an evolution run: it cannot be resumed (its record is "
                "kept as it is); start one with `kevo evolve {}`",
                run_id, row->task);
  KEVO_TRY(check_resume_evaluator(*row, evaluator_.is_fake()));
  // History is append-only: the row as it stood (status, stop reason, note, result, budgets)
  // is kept before this session changes it.
  KEVO_TRY(db_.record_resume(*row));
  return run(std::move(*row), opts, true);
}

// The phases of run_state.h in order: baseline, search (after replaying a resumed run's
// candidates), held-out verification; each may end the run.
Result<RunOutcome> Engine::run(store::RunRow row, const EngineOptions& opts, bool resumed) {
  std::unique_ptr<EvalPool> own_pool;
  EvalPool* pool = pool_ ? pool_ : (own_pool = make_serial_pool(evaluator_, task_)).get();
  RunState s(RunServices{.task = task_, .ev = evaluator_, .pool = *pool, .db = db_, .llm = llm_,
                         .ens = ensemble_, .verifier = verifier_, .user_cancel = cancel_, .events = events_,
                         .on_progress = progress_, .gpu_util = gpu_util_, .episodes = episodes_},
             std::move(row), opts);
  if (resumed) keep_budgets(s.row, opts.budgets);
  KEVO_TRY(pool->set_run(s.row.id));
  auto work = make_work_dir(opts, db_, s.row.id);
  if (!work) return work.unexpected();
  s.work_dir = std::move(*work);

  RunOutcome out;
  out.run_id = s.row.id;
  out.fake_evaluator = evaluator_.is_fake();
  const store::StopReason interrupted{store::StopKind::kInterrupted, {}};
  auto base = baseline_phase(s, resumed, out);
  if (!base && cancel_.cancelled()) return finish(s, out, store::RunStatus::kInterrupted, interrupted);
  if (!base) return base.unexpected();
  if (!*base) return finish(s, out, store::RunStatus::kFailed, {store::StopKind::kBaselineFailed, {}});
  KEVO_TRY(start_search(s, **base, resumed));
  KEVO_TRY(search(s, out));
  if (cancel_.cancelled() || s.stop.kind == store::StopKind::kInterrupted)
    return finish(s, out, store::RunStatus::kInterrupted, interrupted);
  const auto t_verify = SteadyClock::now();
  verify_phase(s, out);
  out.verify_s = since(t_verify);
  if (cancel_.cancelled()) return finish(s, out, store::RunStatus::kInterrupted, interrupted);
  s.row.final_json = final_json(out).dump();
  return finish(s, out, s.stop.failed() ? store::RunStatus::kFailed : store::RunStatus::kFinished, s.stop);
}

}  // namespace kevo::evolve
