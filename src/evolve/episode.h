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
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

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
  int64_t episode = 0;           // the episode's number in the run (its job number)
  int turn = 0;                  // the model turn that asked for it (0: not known)
};

struct EpisodeResult {
  Verdict verdict;
  int64_t candidate = 0;  // the candidate recorded; 0 for a compile
};

// The run's token and money limits, which episodes spend turn by turn.
struct SpendLimits {
  std::optional<int64_t> tokens;
  std::optional<double> usd;
};

class EpisodeBroker {
 public:
  // From the run's thread: its limits and what it has recorded so far (every finished call).
  void set_spend(SpendLimits limits, int64_t recorded_tokens, double recorded_usd);
  // From an episode, after each model turn: the turn counts at once, so the run's budgets see an
  // episode's spending before it ends. An error naming the budget once the recorded and in-flight
  // spending reaches a limit: the episode stops at this turn.
  Status charge(int64_t tokens, double usd);
  // Whether another turn may start (the same test, spending nothing).
  Status can_spend() const;
  // From the run's thread: a finished episode's charges leave the in-flight total (the run then
  // records the episode's whole spending as one call).
  void settle(int64_t tokens, double usd);
  int64_t tokens_in_flight() const;
  double usd_in_flight() const;

  // From an episode's thread: waits until the run has evaluated and recorded the attempt. An error
  // when the run is stopping (its budget spent, Ctrl-C) or the attempt repeats an earlier program.
  Result<EpisodeResult> call(EpisodeRequest r);

  struct Waiting {
    EpisodeRequest request;
    std::promise<Result<EpisodeResult>> reply;
  };
  // From the run's thread: the next attempt to evaluate.
  std::optional<Waiting> take();
  // Whether a model waits on an attempt not taken yet: speculative work then waits instead.
  bool has_waiting() const;
  // The first waiting attempt `pick` accepts (one that needs no slot of its own), ahead of others.
  std::optional<Waiting> take_first(const std::function<bool(const EpisodeRequest&)>& pick);
  // Every waiting and later call fails with `why`.
  void close(const std::string& why);
  // Why calls fail now (nullopt: open), so an episode can end instead of asking again.
  std::optional<std::string> closed() const;

 private:
  Status over_locked() const;
  mutable std::mutex mu_;
  std::deque<Waiting> waiting_;
  std::optional<std::string> closed_;
  SpendLimits limits_;
  int64_t recorded_tokens_ = 0, flying_tokens_ = 0;
  double recorded_usd_ = 0, flying_usd_ = 0;
};

// What one episode came to, besides the candidates it left in the run.
struct EpisodeOutcome {
  bool ok = false;
  bool fatal = false;  // it never can (the agent is not installed, a key is missing): the run stops
  std::string error;   // why it did not run
  std::string model;   // "claude-code:claude-sonnet-4-5"
  double cost_usd = 0;
  int64_t input_tokens = 0, output_tokens = 0;
  int64_t charged_tokens = 0;  // what it charged through the broker turn by turn (settled at its end)
  double charged_usd = 0;
  int64_t answer = 0;  // the candidate the agent submitted as its answer (0: none)
  std::string summary; // one line: how it ended
  nlohmann::json record = nlohmann::json::object();  // its turns and calls, stored with the run's events
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
