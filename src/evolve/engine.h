// The evolution engine: one loop, every strategy a configuration of it (strategy.h).
//
// Pipeline: up to `parallel` proposals run on worker threads (LLM call, answer parsing, edits,
// compile-cache warm-up, so compiles run in parallel); ready candidates go to the evaluation pool
// (eval_pool.h: one slot per GPU, or workers through the run database), and as each result
// arrives this thread records it in the run database in its own transaction, updates the
// population and the noise-aware best, and starts new proposals (asynchronous steady state). At
// the end the winner is re-verified on the held-out configurations with a fresh seed and
// re-timed; a winner that fails there is reported as such, and runners-up are tried.
//
// With no model, the engine tunes the constants the baseline marks `// kevo: tune` (tuning.h).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "evolve/candidate_evaluator.h"
#include "evolve/eval_pool.h"
#include "evolve/events.h"
#include "evolve/strategy.h"
#include "llm/cancel.h"
#include "llm/client.h"
#include "llm/ensemble.h"
#include "store/run_db.h"
#include "util/gpu_util_sampler.h"

namespace kevo::evolve {

class EpisodeRunner;  // episode.h

struct Budgets {
  int max_candidates = 45;             // completed candidates (evaluated or invalid answers)
  std::optional<int64_t> max_calls;    // LLM calls started
  std::optional<int64_t> max_tokens;   // input + output tokens
  std::optional<double> max_usd;
  std::optional<double> max_minutes;   // wall time of this session
  // Stop once the best candidate's time is within this fraction of the speed-of-light floor
  // (floor / time >= it, e.g. 0.85): what is left to gain there is small (docs/SUITE.md, campaigns).
  std::optional<double> stop_at_sol;
  nlohmann::json to_json() const;
  static Result<Budgets> from_json(const nlohmann::json& j);  // a field of another type: an error naming it
};

inline constexpr double kSearchTimeBudgetS = 1.0;

struct EngineOptions {
  StrategyConfig strategy;
  Budgets budgets;
  // Seeds, timeouts, and the search's timing budget; held-out flags are set here. The search
  // times every candidate for kSearchTimeBudgetS: a timing that runs to its budget is most of an
  // evaluation, and one GPU times one candidate at a time, so the budget sets how many candidates
  // a minute the search sees. Its figures are the search's, with the allowance each verdict states (twice the
  // checker's clock's interval where that exceeds 3%); the finalists are re-timed on held-out
  // shapes for verify_time_budget_s, and only that figure is a winner's.
  EvalOptions eval = [] {
    EvalOptions e;
    e.time_budget_s = kSearchTimeBudgetS;
    return e;
  }();
  double verify_time_budget_s = 4.0;
  // Racing: a candidate's timing may stop after 4 rounds once its speedup is clearly below the
  // line it could matter above, the run's best so far or the baseline (1.0x), whichever is higher
  // (check/timing.h). Such a candidate can never be the new best (confidently_faster); its figure
  // keeps its wider interval and the flag timing_raced. false: every candidate timed to precision.
  bool race_timing = true;
  uint64_t seed = 0;                   // parent and operator choices; 0: random
  std::filesystem::path work_dir;      // candidate files; empty: beside the database
  int max_llm_failures_in_row = 8;     // transient failures/refusals before the run stops
  // A baseline verified earlier with the same task files, GPUs, toolkit and kevo is not checked
  // again (baseline_record.h); false: check it (`--reverify-baseline`).
  bool reuse_baseline = true;
  // What the command that started the run was given beyond these options (its models and their
  // settings, never a key; where it evaluated): stored with the run and handed back by
  // options_of_run, so a resume restores it. The engine keeps it and never reads it.
  nlohmann::json launch = nlohmann::json::object();
};

struct VerifyAttempt {
  int64_t candidate = 0;
  Outcome outcome = Outcome::InfraError;
  Reason reason = Reason::kNone;
  std::string static_rule;  // with Reason::kStatic
  std::string message;
  double speedup = 0, speedup_lo = 0, speedup_hi = 0;
  // For a task with a PyTorch reference: eager / torch.compile (/ extension) times and the
  // speedups against them, timed on the same inputs after the re-timing (verdict.h).
  nlohmann::json pytorch;
  std::string pytorch_line;  // "vs PyTorch: eager 1.2 ms (2.1x), ..." or empty

  std::string reason_text() const { return kevo::reason_text(reason, static_rule); }
};

struct RunOutcome {
  int64_t run_id = 0;
  store::RunStatus status = store::RunStatus::kRunning;
  std::string stop_reason;
  int candidates = 0, valid = 0;
  int64_t best_candidate = 0;  // the noise-aware best on the visible configs
  double best_speedup = 0;
  int64_t winner = 0;          // the candidate that passed held-out re-verification (0: none)
  double winner_speedup = 0;   // re-timed
  bool best_failed_held_out = false;
  // A candidate passed held-out re-verification, but its speedup interval was not above 1: no
  // faster kernel was found and the baseline stands (no winner).
  bool not_faster = false;
  std::vector<VerifyAttempt> verification;
  double gpu_busy = 0, wall_s = 0;  // gpu_busy: the evaluators' occupancy (Progress::gpu_busy)
  std::optional<double> gpu_util_nvml;  // NVML's GPU utilization over the run; nullopt: not known
  // The search alone (after the baseline, before held-out verification): its candidates, the
  // evaluators' occupancy and NVML's utilization over it (throughput, bench/throughput.sh).
  int search_candidates = 0;
  double search_gpu_busy = 0;
  std::optional<double> search_gpu_util_nvml;
  // Where wall_s went: the baseline's eval (0 when resumed), the search, the held-out verification.
  double baseline_s = 0, search_s = 0, verify_s = 0;
  bool baseline_reused = false;  // an earlier run's verified baseline (baseline_record.h)
  std::string note;  // e.g. the offline-tuning message
  bool fake_evaluator = false;
  Reason baseline_reason = Reason::kNone;  // why the baseline failed (kNoGpu: this host has no usable GPU)
};

// The options a run was started with (stored in its config), for --resume.
Result<EngineOptions> options_of_run(const store::RunRow& run);
// Whether the run was evaluated by a test double (its stored fake_evaluator); false when unknown.
bool run_was_fake(const store::RunRow& run);
// Refuses to continue a run with another kind of evaluator than the one it was evaluated by: a
// fake run resumed on the checker (or the reverse) would rank marker verdicts with measured ones.
Status check_resume_evaluator(const store::RunRow& run, bool fake);

class Engine {
 public:
  // llm may be null: offline tuning. ensemble (optional) receives the model-bandit rewards.
  Engine(const Task& task, CandidateEvaluator& evaluator, store::RunDb& db, llm::LlmClient* llm,
         llm::Ensemble* ensemble, const llm::CancelToken& cancel);

  void set_events(EventSink* sink) { events_ = sink; }
  void set_progress(std::function<void(const Progress&)> f) { progress_ = std::move(f); }
  // Where evaluations run (several at once: eval_pool.h); default: `evaluator`, one at a time.
  // The evaluator still serves warm(), fingerprint() and cuda_version().
  void set_pool(EvalPool* pool) { pool_ = pool; }
  // The LLM verifier (llm_verifier.h): reviews every candidate before it is compiled; its answer
  // is recorded beside the checker's verdict and decides nothing. Null (the default): none.
  void set_verifier(llm::LlmClient* verifier) { verifier_ = verifier; }
  // NVML's utilization of the GPUs that evaluate (util/nvml.h), for the status line and the
  // outcome; null (the default): not known. The sampler may span several runs (kevo bench): a run
  // reads only its own window.
  void set_gpu_util(const GpuUtilSampler* sampler) { gpu_util_ = sampler; }
  // Proposals become agent episodes (episode.h) instead of single model answers; the runner must
  // outlive the run. With it the engine needs no LlmClient.
  void set_episodes(EpisodeRunner* runner) { episodes_ = runner; }

  Result<RunOutcome> start(const EngineOptions& opts);
  // Continues a stored run with its population rebuilt from the database.
  Result<RunOutcome> resume(int64_t run_id, const EngineOptions& opts);

 private:
  Result<RunOutcome> run(store::RunRow row, const EngineOptions& opts, bool resumed);

  const Task& task_;
  CandidateEvaluator& evaluator_;
  store::RunDb& db_;
  llm::LlmClient* llm_;
  llm::Ensemble* ensemble_;
  const llm::CancelToken& cancel_;
  EventSink* events_ = nullptr;
  EvalPool* pool_ = nullptr;
  llm::LlmClient* verifier_ = nullptr;
  const GpuUtilSampler* gpu_util_ = nullptr;
  std::function<void(const Progress&)> progress_;
  EpisodeRunner* episodes_ = nullptr;
};

// The message shown when no model is configured.
std::string offline_note(bool found_tunables);

}  // namespace kevo::evolve
