// Agent CLIs as the search's mutator (`kevo evolve --model claude-code:MODEL`, `codex:MODEL`,
// `command:TEMPLATE`): each proposal is one episode of the CLI (cli_agent.h), confined in a fresh
// workspace, whose only way to the checker is kevo's tools served in this process through the
// bridge. Every kernel the agent evaluates is a candidate of the search's run (evolve/episode.h);
// the episode's cost (as the CLI reports it) counts against the run's budgets.
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <optional>

#include "agent/budgets.h"
#include "agent/cli_episode.h"
#include "evolve/candidate_evaluator.h"
#include "evolve/episode.h"
#include "task/task.h"

namespace kevo::agent {

struct CliEpisodeOptions {
  AgentCliSpec cli;
  ModelApi api;                          // default_model_api(cli.kind) unless given
  std::filesystem::path work_root;       // episode-N folders (workspace, control) go here
  std::chrono::seconds wall_limit{1800};  // per episode
  std::optional<double> max_usd;         // per episode, where the CLI has a cap
  SessionBudgets budgets;                // per episode
  std::optional<std::filesystem::path> cli_executable;
  std::filesystem::path bridge_executable;  // default: kevo-mcp-bridge beside this program
};

// Where each CLI's model API is and which variable of kevo's environment holds its key:
// ANTHROPIC_BASE_URL (default https://api.anthropic.com) and ANTHROPIC_API_KEY for Claude Code,
// OPENAI_BASE_URL (default https://api.openai.com/v1) and OPENAI_API_KEY for Codex, nothing for a
// command template (it brings its own).
ModelApi default_model_api(AgentCliKind kind);

class CliEpisodes final : public evolve::EpisodeRunner {
 public:
  CliEpisodes(const Task& task, evolve::CandidateEvaluator& ev, CliEpisodeOptions o);
  std::string name() const override;
  evolve::EpisodeOutcome run(const evolve::Job& job, const evolve::TaskContext& ctx, evolve::EpisodeBroker& broker,
                             const llm::CancelToken& cancel) override;

 private:
  Status write_workspace(const std::filesystem::path& ws, const evolve::TaskContext& ctx) const;

  const Task& task_;
  evolve::CandidateEvaluator& ev_;
  CliEpisodeOptions o_;
  std::atomic<int> episodes_{0};
};

// The episode's first message: the search's prompt for the planned operator, then how to answer
// (through the tools, never in text).
std::string episode_prompt(const evolve::Job& job);

}  // namespace kevo::agent
