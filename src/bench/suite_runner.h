// `kevo bench`: `kevo evolve` over every task of a suite into one run database, resumable. A task
// whose latest run of this strategy/model/evaluator has finished (or failed) is skipped; one that
// was interrupted (or killed: still marked running) is resumed with its stored population; a task
// without one is started.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "evolve/engine.h"
#include "evolve/episode.h"
#include "evolve/eval_pool.h"
#include "results/table.h"
#include "torch/time_result.h"

namespace kevo::bench {

enum class Action { kStart, kResume, kSkip };
const char* to_string(Action a);

struct PlanItem {
  std::string task;
  Action action = Action::kStart;
  int64_t run_id = 0;  // the run resumed or skipped
};

// What to do per task, from the runs already in the database (pure; for tests).
std::vector<PlanItem> plan(const std::vector<store::RunRow>& runs, const std::vector<std::string>& tasks,
                           const results::RunKey& key);

// The key the engine will record for runs made with these settings.
results::RunKey key_for(const evolve::EngineOptions& opts, const llm::LlmClient* llm, bool fake_evaluator);

struct BenchSetup {
  std::vector<std::string> tasks;
  std::function<Result<Task>(const std::string&)> load_task;
  evolve::EngineOptions options;
  evolve::CandidateEvaluator* evaluator = nullptr;
  llm::LlmClient* llm = nullptr;        // null: offline tuning
  llm::Ensemble* ensemble = nullptr;
  const llm::CancelToken* cancel = nullptr;
  std::function<void(const std::string& task, const evolve::Progress&)> progress;
  std::function<void(const std::string& line)> log;  // one line per task
  // Times a task's PyTorch side (on a GPU: torch::time_torch_main); null: PyTorch is not timed.
  // Called for tasks with a torch_reference once their run is done (the GPU idle), also for runs
  // done in an earlier session whose record lacks the times; the result goes into the run's
  // baseline record as "pytorch" (torch::pytorch_json), where the table reads it. An error that
  // says this machine cannot time PyTorch (torch::torch_unavailable) turns it off for the rest
  // of the bench, with one line of log; other errors are recorded as {"skipped": why}.
  std::function<Result<torch::TimeResult>(const Task&)> time_torch;
  // Where a task's evaluations run (several at once, or through the run database's queue); null,
  // or a null pool: `evaluator`, one at a time.
  std::function<Result<std::unique_ptr<evolve::EvalPool>>(const Task&)> pool_for;
  // NVML's utilization of the GPUs that evaluate (util/nvml.h), one sampler over the whole bench:
  // each run reads its own window. Null: not known.
  const GpuUtilSampler* gpu_util = nullptr;
  // Proposals as tool-using episodes (mutator agent): the runner for a task; null: model answers.
  std::function<std::unique_ptr<evolve::EpisodeRunner>(const Task&)> episodes_for;
};

struct BenchOutcome {
  int started = 0, resumed = 0, skipped = 0;
  bool interrupted = false;
  std::vector<std::string> errors;  // "task: why" for tasks that could not be run
  int torch_timed = 0;              // tasks whose PyTorch side was timed in this session
};

Result<BenchOutcome> run_bench(store::RunDb& db, const BenchSetup& setup);

}  // namespace kevo::bench
