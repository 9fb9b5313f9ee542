// Proposals that are agent episodes: instead of one model answer, an agent (an agent CLI, or a
// model with tools) works on the proposal's prompt for a while, evaluating kernels as it goes. Each
// evaluation it asks for is one of the run's candidates (operator `agent`), evaluated in the run's
// pool beside every other and recorded on the run's thread, so the population, the budgets and the
// held-out verification at the end treat them as any candidate. The episode itself is accounted as
// one call (its cost and tokens against the run's budgets).
//
// Thread-safety: an episode runs on a proposal thread and reaches the run only through the broker.
#pragma once

#include <cstdint>
#include <deque>
#include <future>
#include <mutex>
#include <optional>
#include <string>

#include "check/verdict.h"
#include "evolve/proposal.h"
#include "evolve/task_context.h"
#include "llm/cancel.h"
#include "util/result.h"

namespace kevo::evolve {

enum class EpisodeCall { kEvaluate, kProfile, kCompile };

struct EpisodeRequest {
  EpisodeCall call = EpisodeCall::kEvaluate;
  std::string source, name, idea;
  std::vector<int64_t> parents;  // the episode's previous attempt, so lineage follows its turns
  std::string model;             // what the run records as the candidate's model
};

struct EpisodeResult {
  Verdict verdict;
  int64_t candidate = 0;  // the candidate recorded; 0 for a compile
};

class EpisodeBroker {
 public:
  // From an episode's thread: waits until the run has evaluated and recorded the attempt. An error
  // when the run is stopping (its budget spent, Ctrl-C) or the attempt repeats an earlier program.
  Result<EpisodeResult> call(EpisodeRequest r);

  struct Waiting {
    EpisodeRequest request;
    std::promise<Result<EpisodeResult>> reply;
  };
  // From the run's thread: the next attempt to evaluate.
  std::optional<Waiting> take();
  // Every waiting and later call fails with `why`.
  void close(const std::string& why);

 private:
  std::mutex mu_;
  std::deque<Waiting> waiting_;
  std::optional<std::string> closed_;
};

// What one episode came to, besides the candidates it left in the run.
struct EpisodeOutcome {
  bool ok = false;
  bool fatal = false;  // it never can (the agent is not installed, a key is missing): the run stops
  std::string error;   // why it did not run
  std::string model;   // "claude-code:claude-sonnet-4-5"
  double cost_usd = 0;
  int64_t input_tokens = 0, output_tokens = 0;
  int64_t answer = 0;  // the candidate the agent submitted as its answer (0: none)
  std::string summary; // one line: how it ended
};

// The mutator of episodes (`kevo evolve --model claude-code:MODEL`, ...). Several run at once.
class EpisodeRunner {
 public:
  virtual ~EpisodeRunner() = default;
  virtual std::string name() const = 0;
  // The episode for one planned job: its first message is job.prompt; it ends when the agent
  // ends, at its own limits, or when `cancel` fires.
  virtual EpisodeOutcome run(const Job& job, const TaskContext& ctx, EpisodeBroker& broker,
                             const llm::CancelToken& cancel) = 0;
};

}  // namespace kevo::evolve
