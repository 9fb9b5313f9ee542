#include "evolve/engine.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <deque>
#include <future>
#include <list>
#include <map>
#include <random>
#include <set>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "compile/cache.h"
#include "evolve/baseline_record.h"
#include "evolve/eval_pool.h"
#include "evolve/features.h"
#include "evolve/population.h"
#include "evolve/proposal.h"
#include "evolve/stored_verdict.h"
#include "evolve/task_context.h"
#include "evolve/tuning.h"
#include "evolve/verifier_matrix.h"
#include "store/stop_reason.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/json_fields.h"

namespace kevo::evolve {

using nlohmann::json;
using SteadyClock = std::chrono::steady_clock;

json Budgets::to_json() const {
  json j = {{"max_candidates", max_candidates}};
  if (max_calls) j["max_calls"] = *max_calls;
  if (max_tokens) j["max_tokens"] = *max_tokens;
  if (max_usd) j["max_usd"] = *max_usd;
  if (max_minutes) j["max_minutes"] = *max_minutes;
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

bool run_was_fake(const store::RunRow& run) {
  json j = json::parse(run.config_json, nullptr, false);
  const json* fake = j.is_object() && j.contains("fake_evaluator") ? &j["fake_evaluator"] : nullptr;
  return fake && fake->is_boolean() && fake->get<bool>();
}

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

double since(SteadyClock::time_point t) {
  return std::chrono::duration<double>(SteadyClock::now() - t).count();
}

json or_null(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

// Calls `tick` at once and then every second on a thread of its own until destroyed (a status
// line for a step that blocks, such as the baseline's check).
class Ticker {
 public:
  explicit Ticker(std::function<void()> tick)
      : thread_([this, tick = std::move(tick)] {
          std::unique_lock lock(mu_);
          do tick();
          while (!cv_.wait_for(lock, std::chrono::seconds(1), [this] { return done_; }));
        }) {}
  ~Ticker() {
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

json baseline_summary(const Verdict& v, bool fake) {
  json j = {{"outcome", outcome_name(v.outcome)}, {"reason", v.reason_text()}, {"message", v.message},
            {"fake_evaluator", fake}};
  if (v.device) j["gpu"] = v.device->name;
  if (v.compile) j["arch"] = v.compile->arch_used;
  if (v.timing) {
    j["time_ms"] = v.timing->candidate.median;
    j["sol_floor_ms"] = v.timing->floor.floor_ms;
    j["sol_bound"] = v.timing->floor.bound ? v.timing->floor.bound : "";
  }
  if (v.profile) j["profile"] = v.profile->to_json();
  // Which configs were checked against the reference and which only against the baseline itself
  // (over the host budget): a reader of a reused record sees what "verified" meant.
  j["configs"] = json::object();
  for (const auto& c : v.configs) j["configs"][c.config] = to_string(c.against);
  return j;
}

Verdict verdict_from_summary(const json& j) {
  Verdict v;
  if (j.contains("gpu")) v.device = DeviceCeilings{.name = j.value("gpu", "")};
  if (j.contains("arch")) v.compile = CompileResult{.ok = true, .arch_used = j.value("arch", "")};
  if (j.contains("time_ms")) {
    Timing t;
    t.candidate.median = j.value("time_ms", 0.0);
    t.floor.floor_ms = j.value("sol_floor_ms", 0.0);
    t.floor.bound = j.value("sol_bound", "") == "compute" ? "compute" : "memory";
    v.timing = t;
  }
  if (j.contains("profile"))  // advice only: a damaged one is left out
    if (auto p = profile_from_json(j["profile"])) v.profile = std::move(*p);
  return v;
}

Member member_of(const store::CandidateRow& r) {
  Member m;
  m.id = r.id;
  m.speed = {r.speedup, r.speedup_lo, r.speedup_hi};
  m.island = r.island;
  m.generation = r.generation;
  m.cell = KernelFeatures::from_json(json::parse(r.features_json, nullptr, false)).cell();
  return m;
}

bool is_valid(const store::CandidateRow& r) { return r.passed() && r.speedup > 0; }

std::string first_mismatch(const Verdict& v) {
  for (const auto& c : v.configs)
    if (!c.ok && !c.detail.empty()) return c.detail;
  return v.message;
}

std::string clip(std::string s, size_t n) {
  if (s.size() > n) s = s.substr(0, n) + "\n[... trimmed]";
  return s;
}

// Everything one run keeps while it goes.
struct State {
  store::RunRow row;
  EngineOptions opts;
  TaskContext ctx;
  Population pop{PopulationConfig{}};
  std::map<int64_t, store::CandidateRow> rows;  // every candidate of the run, by id
  std::vector<int64_t> order;                   // completion order
  int seq = 0, valid = 0, since_best = 0, infra_in_row = 0, llm_fail_in_row = 0;
  int64_t calls = 0, tokens = 0, next_job = 1;
  double cost = 0, gpu_s = 0;
  std::deque<Job> repairs;
  std::map<std::string, int64_t> seen;  // source fingerprint -> first candidate (0: the baseline)
  std::map<int64_t, std::string> diagnoses;  // a profiled candidate's diagnosis, for its children
  bool told_not_profiled = false;            // "not profiled: why" is said once a run
  llm::LlmClient* verifier = nullptr;        // the LLM verifier (never the gate); null: none
  std::set<std::string> evaluating;     // fingerprints of the evaluations in flight
  int64_t next_ticket = 1;
  std::mt19937_64 rng;
  SteadyClock::time_point t0 = SteadyClock::now();
  // What the status line shows: the phase, and the search's start for its ETA.
  Progress::Phase phase = Progress::Phase::kSearch;
  std::string phase_detail;
  std::optional<SteadyClock::time_point> search_t0;
  int search_seq0 = 0;
  const GpuUtilSampler* gpu_util = nullptr;  // null: NVML's figure is not known
  GpuUtilSampler::Mark util_t0;              // the run's window starts here
  store::StopReason stop;  // why no new proposal starts
  bool hard_stop = false;  // in-flight proposals are discarded, not evaluated
};

// One run in progress: replays a resumed run, then proposes, evaluates and records candidates
// (or tunes offline) and verifies the best; Engine::run sets it up and turns it into an outcome.
class EvolutionRun {
 public:
  EvolutionRun(const Task& task, CandidateEvaluator& ev, EvalPool& pool, store::RunDb& db, llm::LlmClient* llm,
               llm::Ensemble* ens, const llm::CancelToken& user_cancel, EventSink* events,
               const std::function<void(const Progress&)>& progress, State& s)
      : task_(task), ev_(ev), db_(db), llm_(llm), ens_(ens), user_cancel_(user_cancel), events_(events),
        progress_(progress), s_(s), pool_(pool) {}

  void emit(const std::string& kind, const json& data) {
    if (events_) events_->emit(s_.row.id, kind, data);
    (void)db_.add_event(s_.row.id, kind, data.dump());
  }

  Progress progress(int in_flight) const {
    Progress p;
    p.run_id = s_.row.id;
    p.done = s_.seq;
    p.budget = s_.opts.budgets.max_candidates;
    p.valid = s_.valid;
    p.in_flight = in_flight;
    p.best_speedup = s_.pop.best() ? s_.pop.best()->speed.value : 0;
    p.tokens = s_.tokens;
    p.cost_usd = s_.cost;
    p.elapsed_s = since(s_.t0);
    // The evaluators' occupancy: busy slot-seconds over the slots' wall time.
    p.gpu_busy = p.elapsed_s > 0 ? std::min(1.0, s_.gpu_s / (p.elapsed_s * pool_.slots())) : 0;
    if (s_.gpu_util) p.gpu_util = s_.gpu_util->mean_since(s_.util_t0);
    p.phase = s_.phase;
    p.detail = s_.phase_detail;
    if (s_.search_t0 && s_.seq > s_.search_seq0 && p.budget > s_.seq)
      p.eta_s = since(*s_.search_t0) / (s_.seq - s_.search_seq0) * (p.budget - s_.seq);
    return p;
  }
  void show(const Progress& p) {
    if (progress_) progress_(p);
  }
  void report(int in_flight) {
    if (progress_) progress_(progress(in_flight));
  }

  // Candidates that were really evaluated (not invalid answers, not repeats) define a program seen.
  void remember_source(const store::CandidateRow& c) {
    if (c.passed() && !c.verdict_json.empty()) {
      ProfileAdvice a = profile_advice(c.verdict_json);
      if (!a.diagnosis.empty()) s_.diagnoses[c.id] = a.diagnosis;
      if (!a.not_profiled.empty() && !std::exchange(s_.told_not_profiled, true))
        spdlog::warn("candidates are not profiled: {}; the search goes on without profiles", a.not_profiled);
    }
    if (c.outcome == store::CandidateOutcome::kInvalidAnswer || c.outcome == store::CandidateOutcome::kDuplicate ||
        c.source.empty())
      return;
    s_.seen.emplace(ev_.fingerprint(c.source), c.id);
  }

  // Rebuilds counters and the population from the stored candidates, in completion order, so a
  // resumed run continues with the population it had.
  Status replay() {
    auto cands = db_.candidates(s_.row.id);
    if (!cands) return cands.unexpected();
    for (auto& c : *cands) {
      s_.seq = std::max(s_.seq, c.seq);
      if (is_valid(c)) {
        ++s_.valid;
        if (s_.pop.offer(member_of(c))) s_.since_best = 0;
        else ++s_.since_best;
      } else {
        ++s_.since_best;
      }
      s_.pop.note_completed();
      s_.order.push_back(c.id);
      remember_source(c);
      s_.rows[c.id] = std::move(c);
    }
    auto t = db_.totals(s_.row.id);
    if (!t) return t.unexpected();
    s_.calls = t->llm_calls;
    s_.tokens = t->tokens;
    s_.cost = t->cost_usd;
    s_.next_job = t->llm_calls + 1;
    return {};
  }

  // Why no new proposal may start now (kNone: it may).
  store::StopKind blocked(size_t in_flight) const {
    using K = store::StopKind;
    const Budgets& b = s_.opts.budgets;
    if (user_cancel_.cancelled()) return K::kInterrupted;
    if (s_.seq + static_cast<int>(in_flight) >= b.max_candidates) return K::kBudgetCandidates;
    if (b.max_calls && s_.calls >= *b.max_calls) return K::kBudgetCalls;
    if (b.max_tokens && s_.tokens >= *b.max_tokens) return K::kBudgetTokens;
    if (b.max_usd && s_.cost >= *b.max_usd) return K::kBudgetUsd;
    if (b.max_minutes && since(s_.t0) >= *b.max_minutes * 60) return K::kBudgetMinutes;
    if (s_.opts.strategy.stagnation > 0 && s_.since_best >= s_.opts.strategy.stagnation) return K::kStagnation;
    return K::kNone;
  }

  std::vector<SolutionView> views(const std::vector<Member>& ms) const {
    std::vector<SolutionView> out;
    for (const auto& m : ms) {
      auto it = s_.rows.find(m.id);
      if (it == s_.rows.end()) continue;
      const auto& r = it->second;
      auto d = s_.diagnoses.find(r.id);
      out.push_back({r.id, r.name, r.rationale, r.source, r.speedup, r.time_ms,
                     d == s_.diagnoses.end() ? std::string() : d->second});
    }
    return out;
  }

  std::vector<InsightView> insights() const {
    std::vector<InsightView> out;
    for (auto it = s_.order.rbegin(); it != s_.order.rend(); ++it) {
      if (static_cast<int>(out.size()) >= s_.opts.strategy.insights_shown) break;
      const auto& r = s_.rows.at(*it);
      if (r.rationale.empty()) continue;
      out.push_back({r.id, r.name, r.rationale, r.outcome, r.speedup});
    }
    return out;
  }

  Op choose_op() {
    const auto& ops = s_.opts.strategy.operators;
    std::vector<double> w;
    for (const auto& [op, weight] : ops) w.push_back(weight);
    if (w.empty()) return Op::kMutate;
    std::discrete_distribution<size_t> d(w.begin(), w.end());
    return ops[d(s_.rng)].first;
  }

  Job next_job() {
    const StrategyConfig& st = s_.opts.strategy;
    PromptInput in;
    in.ctx = &s_.ctx;
    Job j;
    if (!s_.repairs.empty()) {
      j = std::move(s_.repairs.front());
      s_.repairs.pop_front();
      in.op = Op::kRepair;
      in.failed_source = j.base_source;
      in.feedback = j.prompt.user;  // the feedback travels in the queued job until now
    } else if (s_.pop.empty()) {
      j.op = Op::kInit;  // until a first valid candidate exists, everything starts from the baseline
      j.generation = 1;
    } else {
      j.op = choose_op();
      j.island = st.population.kind == PolicyKind::kIslands ? s_.pop.next_island() : 0;
      int k = 1;
      if (j.op == Op::kCrossover) k = 2;
      else if (j.op == Op::kRewrite) k = st.info.solutions ? st.solutions_shown : 0;
      else if (j.op == Op::kMutate) k = st.info.solutions ? std::max(1, st.solutions_shown) : 1;
      auto parents = s_.pop.select(k, j.island, s_.rng);
      if (j.op == Op::kCrossover && parents.size() < 2) j.op = Op::kMutate;
      if (parents.empty() && j.op != Op::kRewrite) j.op = Op::kInit;
      if (j.op == Op::kRewrite) {
        in.parents = views(parents);  // background only; no lineage from a rewrite
      } else if (!parents.empty()) {
        in.parents = views(parents);
        size_t n = j.op == Op::kCrossover ? 2 : 1;  // lineage: the operator's real inputs
        for (size_t i = 0; i < n && i < parents.size(); ++i) {
          j.parents.push_back(parents[i].id);
          j.generation = std::max(j.generation, parents[i].generation + 1);
        }
        j.parent_speedup = parents[0].speed.value;
        j.base_source = s_.rows.at(parents[0].id).source;
      }
      if (j.generation == 0) j.generation = 1;
    }
    in.op = j.op;
    if (st.info.insights) in.insights = insights();
    j.no = s_.next_job++;
    j.prompt = build_prompt(st, in);
    return j;
  }

  void queue_repair(const store::CandidateRow& failed, const std::string& source, std::string feedback) {
    if (failed.repair_round >= s_.opts.strategy.repair_rounds) return;
    Job j;
    j.op = Op::kRepair;
    j.parents = {failed.id};
    j.base_source = source;
    j.prompt.user = clip(scrub_held_out(std::move(feedback), task_), 4000);
    j.repair_round = failed.repair_round + 1;
    j.island = failed.island;
    j.generation = failed.generation + 1;
    j.parent_speedup = 1.0;
    s_.repairs.push_back(std::move(j));
  }

  store::LlmCallRow call_row(const Proposal& p, const std::string& error) const {
    store::LlmCallRow c;
    c.run_id = s_.row.id;
    c.model = p.llm_ok ? p.response.model : (llm_ ? llm_->name() : "");
    c.purpose = to_string(p.job.op);
    c.input_tokens = p.response.usage.input_tokens;
    c.output_tokens = p.response.usage.output_tokens;
    c.cost_usd = p.response.cost_usd;
    c.latency_s = p.response.latency_s;
    c.from_cache = p.response.from_cache;
    c.error = error;
    return c;
  }

  store::LlmCallRow verifier_call_row(const VerifierAnswer& a) const {
    store::LlmCallRow c;
    c.run_id = s_.row.id;
    c.model = a.model;
    c.purpose = "verify";
    c.input_tokens = a.input_tokens;
    c.output_tokens = a.output_tokens;
    c.cost_usd = a.cost_usd;
    c.latency_s = a.latency_s;
    c.from_cache = a.from_cache;
    c.error = a.error;
    return c;
  }

  // Stores a completed candidate, updates the population and the best; returns the stored row.
  Result<store::CandidateRow> record(store::CandidateRow c, const std::vector<store::LlmCallRow>& calls) {
    c.run_id = s_.row.id;
    c.seq = ++s_.seq;
    bool valid = is_valid(c);
    Member m = member_of(c);
    bool new_best = valid && (!s_.pop.best() || confidently_faster(m.speed, s_.pop.best()->speed));
    c.accepted = new_best;
    if (auto st = db_.add_candidate(c, calls); !st) {
      --s_.seq;
      return st.unexpected();
    }
    m.id = c.id;
    if (valid) {
      ++s_.valid;
      s_.pop.offer(m);
    }
    s_.since_best = new_best ? 0 : s_.since_best + 1;
    Completion done = s_.pop.note_completed();
    s_.order.push_back(c.id);
    remember_source(c);
    s_.rows[c.id] = c;
    emit("candidate", {{"candidate", c.id}, {"seq", c.seq}, {"operator", c.op}, {"parents", c.parents},
                       {"model", c.model}, {"outcome", to_string(c.outcome)}, {"reason", c.reason},
                       {"speedup", c.speedup}, {"speedup_ci", {c.speedup_lo, c.speedup_hi}},
                       {"generation", c.generation}, {"island", c.island}, {"accepted", c.accepted}});
    if (new_best) {
      s_.row.best_candidate = c.id;
      s_.row.best_speedup = c.speedup;
      (void)db_.update_run(s_.row);
      emit("new_best", {{"candidate", c.id}, {"speedup", c.speedup}, {"speedup_ci", {c.speedup_lo, c.speedup_hi}}});
    }
    if (done.migrated) emit("migration", {{"completed", s_.pop.completed()}});
    if (!done.reset.empty()) emit("island_reset", {{"completed", s_.pop.completed()}, {"islands", done.reset}});
    return c;
  }

  store::CandidateRow row_from_verdict(const Verdict& v, const std::string& source) {
    store::CandidateRow c = candidate_row(v, source);
    if (v.outcome == Outcome::Pass && v.timing) {
      c.time_ms = v.timing->candidate.median;
      c.speedup = v.timing->speedup.value;
      c.speedup_lo = v.timing->speedup.lo;
      c.speedup_hi = v.timing->speedup.hi;
    }
    return c;
  }

  EvalOptions search_options() const {
    EvalOptions o = s_.opts.eval;
    o.visible_only = true;  // held-out configs are for re-verification only
    o.held_out_only = false;
    o.baseline_mode = false;
    o.time = true;
    if (s_.opts.race_timing) o.timing_stop_below = race_line();
    return o;
  }

  // Where a candidate stops mattering: below the best so far it can never replace it, and below the
  // baseline it is no kernel a user wants.
  double race_line() const {
    const auto& best = s_.pop.best();
    return std::max(1.0, best ? best->speed.value : 0.0);
  }

  // One evaluation outside the pipeline (tuning, re-verification), waited for.
  Result<Verdict> evaluate_now(const std::filesystem::path& file, const std::string& source, EvalOptions o) {
    EvalRequest r;
    r.ticket = s_.next_ticket++;
    r.file = file;
    r.source = source;
    r.opts = std::move(o);
    auto d = pool_.run_one(std::move(r), &user_cancel_);
    if (!d) return d.unexpected();
    s_.gpu_s += d->busy_s;
    return std::move(d->verdict);
  }

  void stop_with(store::StopKind kind, bool hard, std::string detail = {}) {
    if (s_.stop.empty()) s_.stop = {kind, std::move(detail)};
    if (hard) {
      s_.hard_stop = true;
      inner_cancel_.cancel();
    }
  }

  Status handle(Proposal p) {
    if (!p.llm_ok) {
      ++s_.calls;  // counted at launch as reserved; failures stay counted (they may be billed)
      KEVO_TRY(db_.add_llm_call(call_row(p, p.llm_error)));
      switch (p.error_kind) {
        case llm::ErrorKind::kCancelled: break;
        case llm::ErrorKind::kBudget: stop_with(store::StopKind::kBudgetLlm, false); break;
        case llm::ErrorKind::kReplayMiss: stop_with(store::StopKind::kReplayExhausted, false); break;
        case llm::ErrorKind::kFatal: stop_with(store::StopKind::kLlmFatal, true, p.llm_error); break;
        default:
          emit("llm_error", {{"error", p.llm_error}});
          if (++s_.llm_fail_in_row >= s_.opts.max_llm_failures_in_row)
            stop_with(store::StopKind::kLlmFailures, false,
                      fmt::format("{} in a row, last: {}", s_.llm_fail_in_row, p.llm_error));
      }
      return {};
    }
    ++s_.calls;
    s_.llm_fail_in_row = 0;
    s_.tokens += p.response.usage.total();
    s_.cost += p.response.cost_usd;
    if (p.verifier) {  // its calls count against the budgets like any other
      ++s_.calls;
      s_.tokens += p.verifier->input_tokens + p.verifier->output_tokens;
      s_.cost += p.verifier->cost_usd;
    }
    if (s_.hard_stop) {  // answered, but the run is stopping: keep the accounting only
      KEVO_TRY(db_.add_llm_call(call_row(p, "discarded: run stopping")));
      return {};
    }
    store::CandidateRow c;
    if (p.invalid_reason != Reason::kNone) {
      c.source = p.source;
      c.outcome = store::CandidateOutcome::kInvalidAnswer;
      c.reason = to_string(p.invalid_reason);
      c.message = clip(p.invalid_message, 2000);
      c.features_json = "{}";
      c.flags_json = "[]";
      return store_proposal(std::move(c), p, p.invalid_message, p.job.base_source);
    }
    const std::string fp = ev_.fingerprint(p.source);
    if (auto dup = s_.seen.find(fp); dup != s_.seen.end()) {
      // The same program (comments and whitespace aside) as one already judged: no GPU time.
      emit("duplicate", {{"of", dup->second}});
      return store_proposal(duplicate_row(p.source, dup->second == 0
                                                      ? std::string("the same code as the baseline")
                                                      : fmt::format("the same code as candidate #{}", dup->second)),
                            p, "", "");
    }
    if (s_.evaluating.count(fp)) {
      emit("duplicate", {{"of", -1}});
      return store_proposal(duplicate_row(p.source, "the same code as a candidate being evaluated now"), p, "", "");
    }
    EvalRequest r;
    r.ticket = s_.next_ticket++;
    r.file = p.file;
    r.source = p.source;
    r.opts = search_options();
    const int64_t ticket = r.ticket;
    KEVO_TRY(pool_.submit(std::move(r)));
    s_.evaluating.insert(fp);
    pending_.emplace(ticket, Pending{std::move(p), fp});
    return {};
  }

  static store::CandidateRow duplicate_row(const std::string& source, const std::string& same_as) {
    store::CandidateRow c;
    c.source = source;
    c.outcome = store::CandidateOutcome::kDuplicate;
    c.reason = to_string(Reason::kDuplicate);
    c.message = same_as + " (comments and whitespace ignored); not evaluated again";
    c.features_json = "{}";
    c.flags_json = "[]";
    return c;
  }

  // A finished evaluation: its candidate recorded, repairs queued, the infrastructure watched.
  Status complete(EvalDone d) {
    auto it = pending_.find(d.ticket);
    if (it == pending_.end()) return fail("an evaluation finished that was never started (ticket {})", d.ticket);
    Pending pe = std::move(it->second);
    pending_.erase(it);
    s_.evaluating.erase(pe.fingerprint);
    s_.gpu_s += d.busy_s;
    const Verdict& v = d.verdict;
    if (v.outcome == Outcome::InfraError) {
      if (++s_.infra_in_row >= 3) stop_with(store::StopKind::kInfraError, true, v.message);
    } else {
      s_.infra_in_row = 0;
    }
    std::string feedback;
    if (v.outcome == Outcome::CompileError)
      feedback = "The compiler said:\n" + (v.compile ? v.compile->diagnostics : v.message);
    else if (v.outcome == Outcome::Incorrect)
      feedback = "The kernel compiled but produced wrong results. First mismatch:\n" + first_mismatch(v);
    const std::string source = pe.proposal.source;
    return store_proposal(row_from_verdict(v, source), pe.proposal, feedback, source);
  }

  // Records a proposal's candidate (judged, invalid or a repeat) with the call that produced it.
  Status store_proposal(store::CandidateRow c, const Proposal& p, const std::string& repair_feedback,
                        const std::string& repair_source) {
    c.op = to_string(p.job.op);
    c.parents = p.job.parents;
    c.generation = p.job.generation;
    c.island = p.job.island;
    c.repair_round = p.job.repair_round;
    c.model = p.response.model;
    c.prompt = p.job.prompt.system + "\n\n" + p.job.prompt.user;
    c.answer = p.response.text;
    c.name = p.name;
    c.rationale = p.rationale;
    std::vector<store::LlmCallRow> calls{call_row(p, "")};
    if (p.verifier) calls.push_back(verifier_call_row(*p.verifier));
    auto stored = record(std::move(c), calls);
    if (!stored) return stored.unexpected();
    if (p.verifier) emit(kVerifierEvent, p.verifier->to_json(stored->id));
    if (ens_) {
      bool improved = is_valid(*stored) && stored->speedup > p.job.parent_speedup;
      ens_->reward(stored->model, improved ? 1.0 : 0.0);
    }
    if (!repair_feedback.empty() && s_.opts.strategy.repair_rounds > 0) queue_repair(*stored, repair_source, repair_feedback);
    return {};
  }

  // A run stopping at once leaves its queued evaluations (pool_.can_leave_pending()): their LLM
  // calls are recorded, no candidate is, and a resumed run starts from what was recorded.
  Status leave_pending() {
    for (auto& [ticket, pe] : pending_) KEVO_TRY(db_.add_llm_call(call_row(pe.proposal, "discarded: run stopping")));
    emit("left_in_queue", {{"evaluations", pending_.size()}});
    pending_.clear();
    s_.evaluating.clear();
    return {};
  }

  bool slot_free() const { return static_cast<int>(pending_.size()) < pool_.slots(); }

  // Starts proposals while a slot is free (so with one slot each result is recorded before the
  // next proposal is planned, as in a serial loop) and the budgets allow.
  void refill(std::list<std::future<Proposal>>& inflight) {
    while (slot_free() && s_.stop.empty() && inflight.size() < static_cast<size_t>(std::max(1, s_.opts.strategy.parallel))) {
      const store::StopKind why = blocked(inflight.size() + pending_.size());
      if (why != store::StopKind::kNone) {
        // Budgets reached with proposals still in flight: those finish; nothing new starts.
        if (why == store::StopKind::kInterrupted || why == store::StopKind::kBudgetMinutes) stop_with(why, true);
        else if (inflight.empty() && pending_.empty()) stop_with(why, false);
        break;
      }
      if (s_.opts.budgets.max_calls && s_.calls + static_cast<int64_t>(inflight.size()) >= *s_.opts.budgets.max_calls)
        break;  // the calls in flight may still fail and free their place
      Job j = next_job();
      inflight.push_back(std::async(std::launch::async, [this, j = std::move(j)]() mutable {
        return make_proposal(std::move(j), *llm_, inner_cancel_, ev_, task_, work_dir_, {s_.verifier, &s_.ctx});
      }));
    }
  }

  std::optional<Proposal> take_ready(std::list<std::future<Proposal>>& inflight) {
    for (auto it = inflight.begin(); it != inflight.end(); ++it)
      if (it->wait_for(std::chrono::milliseconds(0)) == std::future_status::ready) {
        Proposal p = it->get();
        inflight.erase(it);
        return p;
      }
    return std::nullopt;
  }

  // Proposals run on threads; evaluations in the pool. A finished evaluation is recorded first;
  // a ready proposal is taken only when a slot is free for it.
  Status evolve() {
    std::list<std::future<Proposal>> inflight;
    auto last_report = SteadyClock::now();
    auto in_flight = [&] { return static_cast<int>(inflight.size() + pending_.size()); };
    while (true) {
      refill(inflight);
      if (s_.hard_stop && !pending_.empty() && pool_.can_leave_pending()) KEVO_TRY(leave_pending());
      if (inflight.empty() && pending_.empty()) break;
      auto done = pool_.next(std::chrono::milliseconds(0));
      if (!done) return done.unexpected();
      if (*done) {
        KEVO_TRY(complete(std::move(**done)));
      } else if (auto ready = slot_free() ? take_ready(inflight) : std::nullopt) {
        if (user_cancel_.cancelled()) stop_with(store::StopKind::kInterrupted, true);
        KEVO_TRY(handle(std::move(*ready)));
      } else {
        if (user_cancel_.cancelled()) stop_with(store::StopKind::kInterrupted, true);
        if (s_.opts.budgets.max_minutes && since(s_.t0) >= *s_.opts.budgets.max_minutes * 60)
          stop_with(store::StopKind::kBudgetMinutes, true);
        if (since(last_report) > 1.0) {
          report(in_flight());
          last_report = SteadyClock::now();
        }
        if (!pending_.empty()) {
          // Short: a proposal that becomes ready meanwhile should not wait for the next result.
          auto d = pool_.next(std::chrono::milliseconds(inflight.empty() ? 20 : 2));
          if (!d) return d.unexpected();
          if (*d) KEVO_TRY(complete(std::move(**d)));
        } else {
          inflight.front().wait_for(std::chrono::milliseconds(20));
        }
        continue;
      }
      report(in_flight());
      last_report = SteadyClock::now();
    }
    return {};
  }

  // No model: every combination of the annotated constants of the baseline, evaluated in turn,
  // compiles warmed ahead on other threads.
  Status tune(std::string* note) {
    auto src = read_file(task_.baseline_path());
    if (!src) return src.unexpected();
    auto variants = enumerate_variants(*src, static_cast<size_t>(std::max(0, s_.opts.budgets.max_candidates)));
    if (!variants) return fail("tuning annotations in {}: {}", task_.baseline_path().string(), variants.error().message);
    bool any = !variants->empty() && !variants->front().assignment.empty();
    *note = offline_note(any);
    if (!any) {
      stop_with(store::StopKind::kNothingToTune, false);
      return {};
    }
    std::map<std::string, bool> done;
    for (const auto& [id, r] : s_.rows) done[r.source] = true;
    std::vector<Variant> todo;
    for (auto& v : *variants)
      if (!done.count(v.source)) todo.push_back(std::move(v));
    std::deque<std::future<void>> warming;
    size_t warmed = 0;
    for (size_t i = 0; i < todo.size(); ++i) {
      while (warmed < todo.size() && warmed < i + static_cast<size_t>(std::max(1, s_.opts.strategy.parallel))) {
        const std::string& text = todo[warmed].source;
        warming.push_back(std::async(std::launch::async, [this, &text] { ev_.warm(task_, text); }));
        ++warmed;
      }
      const store::StopKind why = blocked(0);
      if (why != store::StopKind::kNone) {
        stop_with(why, why == store::StopKind::kInterrupted);
        break;
      }
      auto file = work_dir_ / fmt::format("tune{}.cu", s_.seq + 1);
      KEVO_TRY(write_file_atomic(file, todo[i].source));
      auto v = evaluate_now(file, todo[i].source, search_options());
      if (!v && user_cancel_.cancelled()) {
        stop_with(store::StopKind::kInterrupted, true);
        break;
      }
      if (!v) return v.unexpected();
      store::CandidateRow c = row_from_verdict(*v, todo[i].source);
      c.op = to_string(Op::kTune);
      c.name = todo[i].label();
      c.rationale = "offline tuning: " + todo[i].label();
      c.generation = 1;
      auto stored = record(std::move(c), {});
      if (!stored) return stored.unexpected();
      report(0);
    }
    for (auto& f : warming) f.wait();
    if (s_.stop.empty()) stop_with(store::StopKind::kTuningDone, false);
    return {};
  }

  // The winner on held-out configurations with a fresh seed, re-timed. If the best fails, the
  // next fastest valid candidates are tried; the outcome says which happened.
  void verify(RunOutcome& out) {
    std::vector<const store::CandidateRow*> order;
    if (s_.pop.best()) order.push_back(&s_.rows.at(s_.pop.best()->id));
    std::vector<const store::CandidateRow*> rest;
    for (const auto& [id, r] : s_.rows)
      if (is_valid(r) && (order.empty() || id != order[0]->id)) rest.push_back(&r);
    std::stable_sort(rest.begin(), rest.end(), [](auto* a, auto* b) { return a->speedup > b->speedup; });
    for (size_t i = 0; i < rest.size() && static_cast<int>(i) < s_.opts.strategy.verify_fallbacks; ++i)
      order.push_back(rest[i]);
    for (size_t i = 0; i < order.size(); ++i) {
      const store::CandidateRow* r = order[i];
      if (user_cancel_.cancelled()) return;
      s_.phase = Progress::Phase::kHeldOut;
      s_.phase_detail = fmt::format("candidate #{} ({:.3f}x), {} of up to {}", r->id, r->speedup, i + 1, order.size());
      report(0);
      auto file = work_dir_ / fmt::format("verify{}.cu", r->id);
      if (!write_file_atomic(file, r->source)) continue;
      EvalOptions o = s_.opts.eval;
      o.held_out_only = true;
      o.visible_only = false;
      o.time = true;
      o.time_budget_s = std::max(o.time_budget_s, s_.opts.verify_time_budget_s);  // the winner's figure
      o.seed.reset();  // fresh inputs: nothing the search saw
      o.torch_time = !task_.torch_reference.empty();  // the winner next to PyTorch, once
      o.profile = false;                               // held-out configs: nothing for a prompt
      auto ev = evaluate_now(file, r->source, o);
      if (!ev) {
        VerifyAttempt lost;
        lost.candidate = r->id;
        lost.outcome = Outcome::InfraError;
        lost.reason = Reason::kEvaluator;
        lost.message = ev.error().message;
        out.verification.push_back(lost);
        continue;
      }
      const Verdict& v = *ev;
      VerifyAttempt a{r->id, v.outcome, v.reason, v.static_rule, v.message};
      if (v.timing) {
        a.speedup = v.timing->speedup.value, a.speedup_lo = v.timing->speedup.lo, a.speedup_hi = v.timing->speedup.hi;
        json tj = json::object();
        add_pytorch_json(*v.timing, tj);
        if (!tj.empty()) a.pytorch = tj;
        a.pytorch_line = pytorch_text(*v.timing);
      }
      out.verification.push_back(a);
      emit("verified", {{"candidate", r->id}, {"outcome", outcome_name(a.outcome)}, {"reason", a.reason_text()},
                        {"message", a.message}, {"speedup", a.speedup}});
      if (v.outcome == Outcome::Pass) {
        // A winner is faster than the baseline beyond noise; the runners-up are slower still.
        if (!v.timing || a.speedup_lo <= 1.0) {
          out.not_faster = true;
          return;
        }
        out.winner = r->id;
        out.winner_speedup = a.speedup;
        return;
      }
      if (r == order[0] && s_.pop.best() && r->id == s_.pop.best()->id) out.best_failed_held_out = true;
    }
  }

  void set_work_dir(std::filesystem::path p) { work_dir_ = std::move(p); }

 private:
  const Task& task_;
  CandidateEvaluator& ev_;
  store::RunDb& db_;
  llm::LlmClient* llm_;
  llm::Ensemble* ens_;
  const llm::CancelToken& user_cancel_;
  EventSink* events_;
  const std::function<void(const Progress&)>& progress_;
  State& s_;
  llm::CancelToken inner_cancel_;  // fired on Ctrl-C and on hard stops; the workers watch it
  std::filesystem::path work_dir_;
  EvalPool& pool_;
  struct Pending {
    Proposal proposal;
    std::string fingerprint;
  };
  std::map<int64_t, Pending> pending_;  // evaluations in the pool, by ticket
};

struct BaselineStep {
  json summary;
  bool passed = false;
  std::string message;
  Reason reason = Reason::kNone;
};

// The baseline checked and timed, or its record from an earlier run with the same task, GPUs,
// toolkit and kevo (baseline_record.h), which is said and stored as such.
Result<BaselineStep> baseline_of(const Task& task_, CandidateEvaluator& evaluator_, const EngineOptions& opts,
                                 EvalPool& pool, State& s, EvolutionRun& r, const llm::CancelToken& cancel) {
  std::optional<BaselineKey> key;
  if (opts.reuse_baseline && !evaluator_.is_fake()) {
    auto k = baseline_key(task_, evaluator_.cuda_version());
    if (k) key = *k;
    auto rec = key ? load_baseline_record(*key, baseline_record_dir()) : std::nullopt;
    // Profiles asked for and none recorded: the baseline is checked again, and profiled.
    if (rec && opts.eval.profile && !rec->summary.contains("profile")) rec.reset();
    if (rec) {
      json summary = rec->summary;
      summary["reused"] = {{"verified_at", rec->verified_at}, {"key", key->to_json()}};
      if (summary.contains("arch")) evaluator_.remember_arch(summary.value("arch", ""));
      r.emit("baseline_reused", {{"verified_at", rec->verified_at}, {"key", key->to_json()}});
      spdlog::info("the baseline of {} was verified on {} with this GPU, toolkit and kevo: reused (--reverify-baseline "
                   "checks it again)", task_.name, fmt::format("{:%Y-%m-%d %H:%M}", fmt::localtime(static_cast<std::time_t>(rec->verified_at))));
      return BaselineStep{summary, true, ""};
    }
  }
  EvalOptions o = opts.eval;
  o.visible_only = true;
  o.time = true;
  EvalRequest req;
  req.ticket = s.next_ticket++;
  req.kind = EvalKind::kBaseline;
  req.opts = o;
  auto done = pool.run_one(std::move(req), &cancel);
  if (!done) return done.unexpected();
  s.gpu_s += done->busy_s;
  const Verdict& bv = done->verdict;
  // The pool's evaluators (other GPUs, other hosts) learned the architecture, not this one, which
  // compiles proposals ahead (warm): tell it.
  if (bv.compile) evaluator_.remember_arch(bv.compile->arch_used);
  json summary = baseline_summary(bv, evaluator_.is_fake());
  if (key && bv.outcome == Outcome::Pass)
    if (auto st = save_baseline_record(*key, summary, baseline_record_dir()); !st)
      spdlog::warn("the baseline's record was not kept (the next run checks it again): {}", st.error().message);
  return BaselineStep{summary, bv.outcome == Outcome::Pass, bv.message, bv.reason};
}

}  // namespace

Engine::Engine(const Task& task, CandidateEvaluator& evaluator, store::RunDb& db, llm::LlmClient* llm,
               llm::Ensemble* ensemble, const llm::CancelToken& cancel)
    : task_(task), evaluator_(evaluator), db_(db), llm_(llm), ensemble_(ensemble), cancel_(cancel) {}

Result<RunOutcome> Engine::start(const EngineOptions& opts) {
  store::RunRow row;
  row.task = task_.name;
  row.task_dir = std::filesystem::absolute(task_.dir).string();
  row.strategy = llm_ ? opts.strategy.name : "offline-tuning";
  json cfg = {{"strategy", opts.strategy.to_json()},
              {"budgets", opts.budgets.to_json()},
              {"seed", opts.seed},
              {"eval_seeds", opts.eval.seeds},
              {"eval_time_budget_s", opts.eval.time_budget_s},
              {"verify_time_budget_s", opts.verify_time_budget_s},
              {"race_timing", opts.race_timing},
              {"eval_profile", opts.eval.profile},
              {"llm", llm_ ? llm_->name() : ""},
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

Result<RunOutcome> Engine::run(store::RunRow row, const EngineOptions& opts, bool resumed) {
  State s;
  s.row = std::move(row);
  s.opts = opts;
  s.verifier = verifier_;
  s.pop = Population(opts.strategy.population);
  s.rng.seed(opts.seed ? opts.seed : std::random_device{}());
  s.row.status = store::RunStatus::kRunning;
  s.row.stop_reason.clear();
  s.gpu_util = gpu_util_;
  if (gpu_util_) s.util_t0 = gpu_util_->mark();
  if (resumed) {  // budgets given now (e.g. a larger one) stay with the run for the next resume
    json cfg = json::parse(s.row.config_json, nullptr, false);
    if (cfg.is_object()) {
      cfg["budgets"] = opts.budgets.to_json();
      s.row.config_json = cfg.dump();
    }
  }
  std::unique_ptr<EvalPool> own_pool;
  EvalPool* pool = pool_;
  if (!pool) pool = (own_pool = make_serial_pool(evaluator_, task_)).get();
  KEVO_TRY(pool->set_run(s.row.id));
  EvolutionRun r(task_, evaluator_, *pool, db_, llm_, ensemble_, cancel_, events_, progress_, s);
  std::filesystem::path work = opts.work_dir;
  if (work.empty()) work = store::default_work_dir(db_);
  work /= fmt::format("run-{}", s.row.id);
  std::error_code ec;
  std::filesystem::create_directories(work, ec);
  if (ec) return fail("cannot create {}: {}", work.string(), ec.message());
  r.set_work_dir(work);

  RunOutcome out;
  out.run_id = s.row.id;
  out.fake_evaluator = evaluator_.is_fake();
  auto finish = [&](store::RunStatus st, const store::StopReason& stop) -> Result<RunOutcome> {
    const std::string why = stop.text();
    s.row.status = st;
    s.row.stop_reason = why;
    KEVO_TRY(db_.update_run(s.row));
    out.status = st;
    out.stop_reason = why;
    out.candidates = s.seq;
    out.valid = s.valid;
    out.best_candidate = s.pop.best() ? s.pop.best()->id : 0;
    out.best_speedup = s.pop.best() ? s.pop.best()->speed.value : 0;
    out.wall_s = since(s.t0);
    out.gpu_busy = out.wall_s > 0 ? std::min(1.0, s.gpu_s / (out.wall_s * pool->slots())) : 0;
    if (s.gpu_util) out.gpu_util_nvml = s.gpu_util->mean_since(s.util_t0);
    out.note = s.row.note;
    r.emit("finished", {{"status", store::to_string(st)}, {"stop_reason", why}, {"candidates", out.candidates},
                        {"valid", out.valid}, {"best_candidate", out.best_candidate},
                        {"best_speedup", out.best_speedup}, {"winner", out.winner},
                        {"best_failed_held_out", out.best_failed_held_out}, {"not_faster", out.not_faster},
                        {"gpu_busy", out.gpu_busy}, {"gpu_util_nvml", or_null(out.gpu_util_nvml)},
                        {"search_s", out.search_s}, {"search_candidates", out.search_candidates},
                        {"search_evaluators_busy", out.search_gpu_busy},
                        {"search_gpu_util_nvml", or_null(out.search_gpu_util_nvml)}});
    r.report(0);
    return out;
  };

  // The baseline: its time and the device go into every prompt (I1).
  json base;
  if (resumed && !s.row.baseline_json.empty()) {
    base = json::parse(s.row.baseline_json, nullptr, false);
  } else {
    auto t = SteadyClock::now();
    s.phase = Progress::Phase::kBaseline;
    s.phase_detail = "checking it against its reference and timing it";
    Result<BaselineStep> b = fail("not run");
    {
      // The check takes seconds to a minute: show it going. The ticker shows a copy of the
      // figures, advancing only its clock, so it reads nothing the check writes.
      Ticker ticker([&r, snap = r.progress(0), t0 = s.t0]() mutable {
        snap.elapsed_s = since(t0);
        r.show(snap);
      });
      b = baseline_of(task_, evaluator_, opts, *pool, s, r, cancel_);
    }
    if (!b && cancel_.cancelled()) return finish(store::RunStatus::kInterrupted, {store::StopKind::kInterrupted, {}});
    if (!b) return b.unexpected();
    out.baseline_s = since(t);
    base = std::move(b->summary);
    out.baseline_reused = base.contains("reused");
    s.row.baseline_json = base.dump();
    if (!b->passed) {
      s.row.note = "the task's baseline fails: " + b->message;
      out.baseline_reason = b->reason;
      return finish(store::RunStatus::kFailed, {store::StopKind::kBaselineFailed, {}});
    }
  }
  s.ctx = make_task_context(task_, verdict_from_summary(base), evaluator_.cuda_version(), load_abi_text());
  if (!s.ctx.baseline_code.empty()) s.seen.emplace(evaluator_.fingerprint(s.ctx.baseline_code), 0);
  KEVO_TRY(db_.update_run(s.row));
  KEVO_TRY(r.replay());
  s.phase = Progress::Phase::kSearch;
  s.phase_detail.clear();
  s.search_t0 = SteadyClock::now();
  s.search_seq0 = s.seq;
  r.emit(resumed ? "run_resumed" : "run_started",
         {{"task", task_.name}, {"strategy", s.row.strategy}, {"completed", s.seq},
          {"budget", opts.budgets.max_candidates}, {"baseline", base}});

  const auto t_search = SteadyClock::now();
  const double gpu_s_search0 = s.gpu_s;
  const auto util_search0 = gpu_util_ ? gpu_util_->mark() : GpuUtilSampler::Mark{};
  if (llm_) {
    KEVO_TRY(r.evolve());
  } else {
    std::string note;
    KEVO_TRY(r.tune(&note));
    s.row.note = note;
  }
  out.search_s = since(t_search);
  out.search_candidates = s.seq - s.search_seq0;
  if (out.search_s > 0) out.search_gpu_busy = std::min(1.0, (s.gpu_s - gpu_s_search0) / (out.search_s * pool->slots()));
  if (gpu_util_) out.search_gpu_util_nvml = gpu_util_->mean_since(util_search0);
  if (cancel_.cancelled() || s.stop.kind == store::StopKind::kInterrupted) return finish(store::RunStatus::kInterrupted, {store::StopKind::kInterrupted, {}});
  const auto t_verify = SteadyClock::now();
  r.verify(out);
  out.verify_s = since(t_verify);
  if (cancel_.cancelled()) return finish(store::RunStatus::kInterrupted, {store::StopKind::kInterrupted, {}});
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
  s.row.final_json = fin.dump();
  return finish(s.stop.failed() ? store::RunStatus::kFailed : store::RunStatus::kFinished, s.stop);
}

}  // namespace kevo::evolve
