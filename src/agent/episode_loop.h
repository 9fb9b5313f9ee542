// The conversation of one LLM episode (llm_episodes.h): ask, run the tool calls of the answer,
// send their results back as the next turn, until the model submits, stops calling tools, or a
// limit is reached (its turns, tokens, evaluations, wall time, malformed calls; the run's token
// and money budgets; the run stopping). Keeps the transcript the run stores with its events.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/kernel_tools.h"
#include "agent/llm_episodes.h"
#include "agent/tool_dispatch.h"
#include "llm/client.h"

namespace kevo::agent {

// How an episode ended, as its record says.
enum class EpisodeEnd {
  kSubmitted,     // the model submitted an answer
  kNoToolCall,    // the model stopped calling tools
  kTurns,         // the episode's turn limit
  kTokens,        // the episode's token limit
  kEvaluations,   // the episode's evaluations were spent and it did not submit
  kWallTime,      // the episode's wall time
  kMalformed,     // too many malformed tool calls
  kRunBudget,     // the run's token or money budget
  kRunStopping,   // the run stopped (Ctrl-C, its budget, a hard stop)
  kModelError,    // the model's API failed (after its retries)
};
const char* to_string(EpisodeEnd e);

class EpisodeLoop {
 public:
  EpisodeLoop(KernelTools& tools, llm::LlmClient& llm, evolve::EpisodeBroker& broker, const llm::CancelToken& cancel,
              const LlmEpisodeOptions& o);
  evolve::EpisodeOutcome run(const evolve::Job& job);

 private:
  std::optional<EpisodeEnd> limit_before_turn() const;
  bool take_turn();  // false: the episode ends (end_ says why)
  struct TimedCall {
    DispatchedCall call;
    double seconds = 0;
  };
  std::vector<TimedCall> dispatch_turn(const std::vector<llm::ToolCall>& calls);
  void run_calls(const llm::ChatResponse& r, nlohmann::json& turn);
  evolve::EpisodeOutcome outcome() const;

  KernelTools& tools_;
  llm::LlmClient& llm_;
  evolve::EpisodeBroker& broker_;
  const llm::CancelToken& cancel_;
  LlmEpisodeOptions o_;
  std::vector<mcp::ToolSpec> specs_;
  llm::ChatRequest req_;
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
  int turn_ = 0, idle_ = 0, calls_ = 0, malformed_ = 0, tool_errors_ = 0;
  int64_t in_ = 0, out_ = 0, charged_ = 0;
  double usd_ = 0;
  bool fatal_ = false, submitted_ = false;
  int told_spent_ = 0;  // turns since the model was told its evaluations are spent
  EpisodeEnd end_ = EpisodeEnd::kNoToolCall;
  std::string end_detail_;
  nlohmann::json turns_ = nlohmann::json::array();
};

// The episode's first message: the search's prompt for the planned operator, then how to work
// with the tools. `limits` are said so the model can plan.
llm::ChatRequest episode_request(const evolve::Job& job, const evolve::EpisodeLimits& limits);

}  // namespace kevo::agent
