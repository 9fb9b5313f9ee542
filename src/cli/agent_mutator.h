// `kevo evolve --model claude-code:MODEL` (or codex:MODEL, command:TEMPLATE): the search's
// proposals become episodes of that agent CLI (agent/cli_episodes.h) instead of model answers.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "evolve/candidate_evaluator.h"
#include "evolve/episode.h"
#include "evolve/strategy.h"
#include "llm/client.h"
#include "store/run_db.h"
#include "task/task.h"
#include "util/result.h"

namespace kevo::cli {

// Whether the --model values name agent CLIs; an error when they mix agents with LLM models or
// name more than one agent (one agent per run).
Result<bool> models_are_agents(const std::vector<std::string>& models);

// The episodes of the agent the first --model names; their folders go under the run database's
// work folder (agent-episodes/).
Result<std::unique_ptr<evolve::EpisodeRunner>> agent_mutator(const std::string& model, const Task& task,
                                                             evolve::CandidateEvaluator& ev, const store::RunDb& db);

// Tool-using episodes of the run's model (`mutator = "agent"`, agent/llm_episodes.h).
std::unique_ptr<evolve::EpisodeRunner> llm_mutator(const evolve::EpisodeLimits& limits, const Task& task,
                                                   evolve::CandidateEvaluator& ev, llm::LlmClient& llm);

}  // namespace kevo::cli
