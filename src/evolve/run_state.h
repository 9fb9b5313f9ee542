// One run's state as it moves through the engine's phases (evolve/engine.cpp runs them in order:
// the baseline (baseline_phase.cpp), replaying a resumed run's candidates (replay_phase.cpp), the
// search (evolve_phase.cpp with a model, tune_phase.cpp without) and held-out verification
// (verify_phase.cpp)). The parts over it: recording candidates (run_record.h) and planning the next
// proposal (run_schedule.h). Internal to evolve/.
// Thread-safety: one run, the engine's thread; proposals on worker threads read only the task, the
// evaluator, the model, the verifier, the context, the work folder and inner_cancel.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "evolve/engine.h"
#include "evolve/episode.h"
#include "evolve/population.h"
#include "evolve/prompts.h"
#include "evolve/proposal.h"
#include "evolve/task_context.h"
#include "store/stop_reason.h"

namespace kevo::evolve {

using SteadyClock = std::chrono::steady_clock;

// Seconds since `t`.
double since(SteadyClock::time_point t);

// What the engine was handed (engine.h), for the parts of one run.
struct RunServices {
  const Task& task;
  CandidateEvaluator& ev;  // serves warm(), fingerprint() and cuda_version(); the pool evaluates
  EvalPool& pool;
  store::RunDb& db;
  llm::LlmClient* llm;       // null: offline tuning
  llm::Ensemble* ens;        // receives the model-bandit rewards; null: none
  llm::LlmClient* verifier;  // the LLM verifier (never the gate); null: none
  const llm::CancelToken& user_cancel;
  EventSink* events;
  const std::function<void(const Progress&)>& on_progress;
  const GpuUtilSampler* gpu_util;  // null: NVML's figure is not known
  EpisodeRunner* episodes = nullptr;  // proposals are agent episodes (episode.h); null: model answers
};

// An evaluation in the pool, by ticket: the proposal it came from and its program's fingerprint.
struct Pending {
  Proposal proposal;
  std::string fingerprint;
  // An episode's attempt: the episode waits for this answer (the verdict and its candidate).
  std::shared_ptr<std::promise<Result<EpisodeResult>>> reply;
  EpisodeCall call = EpisodeCall::kEvaluate;
  bool speculative = false;  // started before any model asked for it (Speculation below)
};

// An evaluation started before any model asked for it (episode_phase.h): the source an episode
// compiled cleanly. An `evaluate` of the same program claims it; only then is it a candidate.
struct Speculation {
  std::string source;
  int64_t episode = 0;           // the episode whose compile started it
  int64_t ticket = 0;            // its evaluation in the pool; 0: waiting for a slot
  std::optional<Verdict> done;   // its verdict, kept until claimed or its episode ends
  double busy_s = 0;             // the slot time its evaluation took
  bool orphan = false;           // its episode ended while it ran: wasted once it finishes
};

// What speculation did in a run, as its "speculation" event reports it.
struct SpeculationCounts {
  int started = 0;       // evaluations that went to the pool
  int used_ready = 0;    // claimed with the verdict already there
  int used_running = 0;  // claimed while the evaluation ran
  int wasted = 0;        // finished (or left behind) with nobody asking
  int dropped = 0;       // never started: claimed first (then run as asked) or their episode ended
  double gpu_s = 0, wasted_gpu_s = 0;  // slot time of all started, of the wasted ones
};

// Everything one run keeps while it goes.
struct RunState : RunServices {
  RunState(const RunServices& services, store::RunRow run, const EngineOptions& options);

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
  std::set<std::string> evaluating;          // fingerprints of the evaluations in flight
  std::map<int64_t, Pending> pending;        // evaluations in the pool, by ticket
  std::map<int64_t, int> episode_candidates;  // candidates each running episode added, by its job number
  std::map<std::string, Speculation> speculations;  // by the program's fingerprint
  std::deque<std::string> speculation_queue;        // fingerprints waiting for a slot, oldest first
  SpeculationCounts speculation;
  int64_t next_ticket = 1;
  std::mt19937_64 rng;
  SteadyClock::time_point t0 = SteadyClock::now();
  // What the status line shows: the phase, and the search's start for its ETA.
  Progress::Phase phase = Progress::Phase::kSearch;
  std::string phase_detail;
  std::optional<SteadyClock::time_point> search_t0;
  int search_seq0 = 0;
  GpuUtilSampler::Mark util_t0;  // the run's window starts here
  store::StopReason stop;        // why no new proposal starts
  bool hard_stop = false;        // in-flight proposals are discarded, not evaluated
  llm::CancelToken inner_cancel;  // fired on Ctrl-C and on hard stops; the workers watch it
  std::filesystem::path work_dir;  // candidate files
  EpisodeBroker broker;            // episodes' attempts, on their way to the pool
  std::vector<ArchiveExampleView> archive_examples;  // retrieved once, at the search's start

  void emit(const std::string& kind, const nlohmann::json& data);
  Progress progress(int in_flight) const;
  void show(const Progress& p) const;
  void report(int in_flight) const;
  // The evaluators' occupancy over `wall_s`: `busy_s` slot-seconds over the slots' wall time.
  double busy_share(double busy_s, double wall_s) const;
  // Stops new proposals (the first reason is kept); hard: in-flight ones are discarded.
  void stop_with(store::StopKind kind, bool hard, std::string detail = {});
  // One evaluation outside the pipeline (tuning, re-verification), waited for.
  Result<Verdict> evaluate_now(const std::filesystem::path& file, const std::string& source, EvalOptions o);
};

// The options every search evaluation runs with: visible configs, timed, raced where allowed.
EvalOptions search_options(const RunState& s);

// The phases, in the order engine.cpp runs them.
// The baseline checked and timed (or a resumed run's, as stored), its summary stored in the run's
// row; nullopt when it fails (the row's note says why, `out.baseline_reason` too).
Result<std::optional<nlohmann::json>> baseline_phase(RunState& s, bool resumed, RunOutcome& out);
// Rebuilds counters and the population from the stored candidates, so a resumed run continues
// with the population it had.
Status replay_phase(RunState& s);
// Proposals from the model, evaluated in the pool and recorded as they finish.
Status evolve_phase(RunState& s);
// No model: the constants the baseline marks tunable, every combination in turn; `note` says so.
Status tune_phase(RunState& s, std::string* note);
// The winner on held-out configurations with a fresh seed, re-timed, and runners-up if it fails.
void verify_phase(RunState& s, RunOutcome& out);

}  // namespace kevo::evolve
