// Every figure `kevo bench`, `kevo report` and `kevo serve` show is computed here, from the rows of
// the run database (store/records.h) read through results/'s views, so the table, the JSON, the
// HTML report and the web view cannot disagree.
//
// Definitions (docs/SUITE.md, "kevo bench"):
// - A task's result is its held-out-verified winner (results/run_final.h). Its speedup is the
//   winner's re-timed speedup from held-out verification (a fresh timing session, free of the
//   selection bias of picking the fastest of many noisy measurements), else its stored speedup.
//   A finished run without a verified winner, a run whose baseline failed, and a task with no run
//   have no correct candidate. A run that has not finished yet (running, interrupted) reports its
//   current noise-aware best, marked unverified; the aggregates count it as unsolved (its best was
//   never re-verified on held-out shapes).
// - fast_p (KernelBench): the share of ALL tasks whose result is correct and whose speedup is
//   strictly greater than p; a task with no correct candidate counts as not fast.
// - median / geometric mean / mean speedup: over the tasks that have a correct candidate (their
//   count is given); the "_all" variants count a task without one as 1.0x (the baseline is kept).
// - vs eager / vs torch.compile / vs extension: the task's PyTorch reference (eager, compiled) and
//   its PyTorch extension baseline (EvoEngineer records), timed through the bridge on the same GPU
//   and the main config's inputs, divided by the result's time; none when not recorded.
// - validity rate = candidates with outcome pass / candidates; compile rate = candidates whose
//   compile succeeded / candidates (an answer without code did not compile); both pooled over
//   every candidate of every task.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "results/candidate_figures.h"
#include "store/records.h"

namespace kevo::results {

double median(std::vector<double> xs);          // 0 for an empty list
double geomean(const std::vector<double>& xs);  // 0 for an empty list or a non-positive value
double mean(const std::vector<double>& xs);     // 0 for an empty list
// Share of `speedups` (nullopt: no correct candidate) strictly above p; 0 for an empty list.
double fast_p(const std::vector<std::optional<double>>& speedups, double p);

// A run that ended because the machine could not run it (no usable GPU, a baseline that could
// not be run, runner crashes, infrastructure errors), not because of the task or the search. Such
// a run measured nothing: it is "not run" in tables and aggregates, and `kevo bench` retries it.
bool infra_failure(const store::RunRow& run);

struct TaskResult {
  std::string task;
  int64_t run_id = 0;                 // 0: no run for this task
  std::string status;                 // run status, "not run" (infra_failure), or "missing"
  bool not_run = false;               // infra_failure: excluded from every aggregate
  std::string stop_reason;
  bool verified = false;              // the result passed held-out re-verification
  int64_t best_candidate = 0;         // 0: no correct candidate
  double baseline_ms = 0;             // 0: unknown (the baseline failed or was never timed)
  std::optional<double> best_ms;      // the result's time on the timed config
  std::optional<double> speedup;      // vs the baseline; nullopt: no correct candidate
  // The task's PyTorch side on the timed config (the run's baseline record holds them when the
  // bench timed them: "pytorch": {eager_ms, compile_ms, extension_ms}), and the result's speedup
  // over each: PyTorch's median / best_ms.
  std::optional<double> eager_ms, compile_ms, extension_ms;
  std::optional<double> speedup_vs_eager, speedup_vs_compile, speedup_vs_extension;
  std::optional<double> sol_fraction;      // speed-of-light floor / best time
  int candidates = 0, valid = 0, compiled = 0;
  int64_t llm_calls = 0, tokens = 0;
  double cost_usd = 0;
  bool fake = false;                  // measured by the marker evaluator: proves nothing
  bool correct() const { return speedup.has_value(); }
};

// One task's result from its run, candidates and LLM totals.
TaskResult task_result(const store::RunRow& run, const std::vector<store::CandidateRow>& candidates,
                       const store::RunTotals& totals);
// The same from candidates whose large columns were already read into `figures` (parallel to
// candidates, figures_of each): what `kevo serve` keeps of a run between requests.
TaskResult task_result(const store::RunRow& run, const std::vector<store::CandidateRow>& candidates,
                       const std::vector<CandidateFigures>& figures, const store::RunTotals& totals);
// A suite task with no run in the database.
TaskResult missing_task(const std::string& task);

// Tasks that were not run (infra_failure) count in `not_run` only; every other figure is over the
// tasks that ran.
struct Aggregates {
  int tasks = 0, correct = 0;                       // tasks that ran, tasks with a correct candidate
  int not_run = 0;                                  // tasks whose run failed for infrastructure
  int unverified = 0;  // tasks whose run has not finished: their best so far counts as unsolved
  double median = 0, geomean = 0, mean = 0;         // over correct tasks
  double median_all = 0, geomean_all = 0, mean_all = 0;  // unsolved tasks count as 1.0x
  double fast_1 = 0, fast_1_5 = 0, fast_2 = 0;      // over all tasks
  int64_t candidates = 0, valid = 0, compiled = 0;
  double validity_rate = 0, compile_rate = 0;       // pooled over candidates
  int64_t llm_calls = 0, tokens = 0;
  double cost_usd = 0;
  int slower = 0;  // tasks whose verified result is slower than their baseline: a mean must not hide them
};
Aggregates aggregate(const std::vector<TaskResult>& tasks);

// The run's best-so-far speedup after each completed candidate (index i: after candidate seq
// i+1): the speedup of the latest candidate that became the noise-aware best, 0 before any.
std::vector<double> best_so_far(const std::vector<store::CandidateRow>& candidates);

// The winner's lineage, winner first, following first parents back to the baseline.
std::vector<const store::CandidateRow*> lineage(const std::vector<store::CandidateRow>& candidates,
                                                int64_t winner);

}  // namespace kevo::results
