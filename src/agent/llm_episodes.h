// Tool-using episodes of an LLM as the search's mutator (`mutator = "agent"` with an API model):
// each proposal is a conversation in which the model calls kevo's tools (the ones `kevo mcp`
// serves, agent/kernel_tools.h) turn by turn, through the LLM layer's tool calling, until it
// submits or a limit ends it. Every kernel it evaluates is one of the search's candidates
// (evolve/episode.h); every turn's tokens and dollars count against the run's budgets as it goes.
#pragma once

#include <atomic>

#include "evolve/candidate_evaluator.h"
#include "evolve/episode.h"
#include "evolve/strategy.h"
#include "llm/client.h"
#include "task/task.h"

namespace kevo::agent {

struct LlmEpisodeOptions {
  evolve::EpisodeLimits limits;
  int idle_turns = 2;      // turns in a row without a tool call before the episode ends
  int malformed_calls = 8;  // malformed tool calls before the episode ends
};

class LlmEpisodes final : public evolve::EpisodeRunner {
 public:
  LlmEpisodes(const Task& task, evolve::CandidateEvaluator& ev, llm::LlmClient& llm, LlmEpisodeOptions o)
      : task_(task), ev_(ev), llm_(llm), o_(o) {}
  std::string name() const override { return llm_.name(); }
  evolve::EpisodeOutcome run(const evolve::Job& job, const evolve::TaskContext& ctx, evolve::EpisodeBroker& broker,
                             const llm::CancelToken& cancel) override;

 private:
  const Task& task_;
  evolve::CandidateEvaluator& ev_;
  llm::LlmClient& llm_;
  LlmEpisodeOptions o_;
};

}  // namespace kevo::agent
