// One agent session over kevo's checker: the tool layer that `kevo mcp` serves and that a search's
// tool-using episodes call. It owns a run in the run database (every evaluation is a candidate of
// it, in order, each the child of the one before), evaluates sources the agent sends on the
// visible configs only, verifies a submitted one on the held-out configs with fresh inputs, and
// keeps the budgets (budgets.h). The agent's word counts for nothing: a session's result is the
// held-out verdict of what it submitted, and a session that ends without one records its best
// evaluated attempt as best, never as a winner.
//
// Thread-safety: every method may be called from several threads; evaluations run one at a time
// (the evaluator is serial), the budget decides how many may wait.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/budgets.h"
#include "check/evaluator.h"
#include "evolve/candidate_evaluator.h"
#include "evolve/episode.h"
#include "evolve/task_context.h"
#include "store/run_db.h"
#include "task/task.h"
#include "util/result.h"

namespace kevo::agent {

struct SessionOptions {
  SessionBudgets budgets;
  EvalOptions eval;                 // seeds and timing; visible_only and held_out_only are set here
  double verify_time_budget_s = 8;  // a submission's re-timing
  std::filesystem::path work_dir;   // where sources are written; empty: beside the database
  std::string strategy = "mcp";     // the run's strategy column
  std::string launch;               // the command line, for the run's record
  // An episode of a search (evolve/episode.h): the session has no run of its own; its attempts are
  // the search's candidates, evaluated and recorded by the search through the broker, and a
  // submission only names the episode's answer (the search verifies its best at its end).
  evolve::EpisodeBroker* broker = nullptr;
  const evolve::TaskContext* context = nullptr;  // with broker: the search's task context
  std::vector<int64_t> parents;                  // with broker: the first attempt's parents
  std::string model;                             // with broker: recorded as each attempt's model
  int64_t episode = 0;                           // with broker: the episode's number in the search
};

// Why a session ended, as its run records it (stop_reason "agent_<name>").
enum class SessionEnd { kClientGone, kShutdown, kWallTime, kError };

// A failed tool call: a budget, a bad argument, a source too large. The text goes to the agent.
struct ToolError {
  std::string message;
  std::optional<Budget> budget;
};
template <class T>
using ToolResultOr = std::variant<T, ToolError>;

struct Attempt {  // one evaluation, as the session keeps it
  int64_t candidate = 0;
  int turn = 0;
  std::string tool;  // evaluate, profile, submit
  std::string source;
  std::string name;
  store::CandidateOutcome outcome = store::CandidateOutcome::kUnknown;
  double speedup = 0, speedup_lo = 0, speedup_hi = 0;
  nlohmann::json view;  // verdict_view.h
};

class KernelSession {
 public:
  // Creates the run and measures the baseline (the reference every speedup is against). An error
  // when the database or work folder fails or the baseline does not pass its own check.
  static Result<std::unique_ptr<KernelSession>> start(const Task& task, evolve::CandidateEvaluator& ev,
                                                      store::RunDb& db, SessionOptions opts);
  // An episode of a search: opts.broker and opts.context are set; no run, no baseline of its own.
  static std::unique_ptr<KernelSession> start_episode(const Task& task, evolve::CandidateEvaluator& ev,
                                                      SessionOptions opts);
  ~KernelSession();

  int64_t run_id() const { return row_.id; }  // 0 for an episode
  int64_t answer() const;                      // the candidate submitted last (0: none)
  int attempts() const;
  const evolve::TaskContext& context() const { return ctx_; }
  const SessionBudgets& budgets() const { return opts_.budgets; }
  void set_client(const std::string& name, const std::string& version);
  // The model turn the next calls belong to (an episode driven turn by turn); 0: each attempt
  // counts as a turn of its own.
  void set_turn(int turn) { turn_ = turn; }

  nlohmann::json task_view() const;
  ToolResultOr<nlohmann::json> compile(const std::string& source);
  ToolResultOr<Attempt> evaluate(const std::string& source, const std::string& name, const std::string& idea);
  ToolResultOr<Attempt> profile(const std::string& source, int64_t candidate);
  ToolResultOr<nlohmann::json> submit(const std::string& source, int64_t candidate);
  nlohmann::json history() const;
  Spent spent() const;
  // True once the wall-time budget has passed and no call is running: the transport may end.
  bool expired() const;

  // Waits for calls in flight (at most `wait`), then records the end in the run (status, stop
  // reason, best). A call still running then is abandoned: the run says so, is marked
  // interrupted, and the call's verdict is not recorded when it comes. Idempotent.
  void finish(SessionEnd why, int protocol_errors,
              std::chrono::milliseconds wait = std::chrono::milliseconds::max());

 private:
  KernelSession(const Task& task, evolve::CandidateEvaluator& ev, store::RunDb* db, SessionOptions opts);
  Status open_run();
  ToolResultOr<Attempt> run_checker(const std::string& source, const std::string& tool, const std::string& name,
                                    const std::string& idea, bool profile);
  std::optional<ToolError> reserve(CallKind kind);
  void release(CallKind kind, double gpu_s);
  std::optional<ToolError> check_source(const std::string& source) const;
  std::string source_of(int64_t candidate) const;
  std::optional<Attempt> attempt_of(const std::string& source) const;
  ToolResultOr<nlohmann::json> verify(int64_t candidate, const std::string& source);
  Result<evolve::EpisodeResult> check(const std::string& source, evolve::EpisodeCall call, const std::string& name,
                                      const std::string& idea);
  Result<evolve::EpisodeResult> check_here(const std::string& source, evolve::EpisodeCall call,
                                           const std::string& name, const std::string& idea);
  ToolResultOr<nlohmann::json> episode_answer(int64_t candidate);
  Result<int64_t> record(const Verdict& v, const std::string& source, const std::string& name, const std::string& idea);
  std::vector<std::string> private_paths() const;
  nlohmann::json shown_verification() const;  // with mu_ held

  const Task& task_;
  evolve::CandidateEvaluator& ev_;
  store::RunDb* db_;  // null for an episode: the search records
  SessionOptions opts_;
  evolve::TaskContext ctx_;
  store::RunRow row_;
  std::filesystem::path work_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::string client_;
  std::atomic<int> turn_{0};

  mutable std::mutex mu_;  // the fields below
  std::condition_variable idle_;
  Spent spent_;
  int calls_in_flight_ = 0;
  std::vector<Attempt> attempts_;
  nlohmann::json verification_ = nlohmann::json::array();
  int64_t winner_ = 0, answer_ = 0;
  int files_ = 0;  // numbers the source files written here
  double winner_speedup_ = 0;
  bool finished_ = false;
  std::mutex eval_mu_;  // one evaluation at a time
};

}  // namespace kevo::agent
