#include "cli/agent_mutator.h"

#include <cstdlib>

#include "agent/cli_episodes.h"
#include "agent/cli_install.h"
#include "agent/cli_kind.h"
#include "agent/llm_episodes.h"

namespace kevo::cli {

Result<bool> models_are_agents(const std::vector<std::string>& models) {
  size_t agents = 0;
  for (const auto& m : models) agents += agent::names_agent_cli(m);
  if (agents == 0) return false;
  if (agents != models.size())
    return fail("--model: an agent CLI (claude-code:, codex:, command:) cannot share a run with LLM models");
  if (agents > 1) return fail("--model: one agent CLI per run (given {})", agents);
  return true;
}

Result<std::unique_ptr<evolve::EpisodeRunner>> agent_mutator(const std::string& model, const Task& task,
                                                             evolve::CandidateEvaluator& ev, const store::RunDb& db) {
  auto spec = agent::parse_agent_cli(model);
  if (!spec) return fail("--model {}: {}", model, spec.error().message);
  // What every episode would fail on is said now, before a run is recorded.
  const agent::ModelApi api = agent::default_model_api(spec->kind);
  if (const char* key = api.key_env.empty() ? "" : std::getenv(api.key_env.c_str()); !key || (!api.key_env.empty() && !*key))
    return fail("--model {}: {} is not set (the agent's model API key); nothing was recorded", model, api.key_env);
  if (spec->kind != agent::AgentCliKind::kCommand)
    if (auto exe = agent::find_cli(spec->kind, std::nullopt); !exe)
      return fail("--model {}: {}; nothing was recorded", model, exe.error().message);
  agent::CliEpisodeOptions o;
  o.cli = *spec;
  o.work_root = store::default_work_dir(db) / "agent-episodes";
  return std::unique_ptr<evolve::EpisodeRunner>(std::make_unique<agent::CliEpisodes>(task, ev, o));
}

std::unique_ptr<evolve::EpisodeRunner> llm_mutator(const evolve::EpisodeLimits& limits, const Task& task,
                                                   evolve::CandidateEvaluator& ev, llm::LlmClient& llm) {
  agent::LlmEpisodeOptions o;
  o.limits = limits;
  return std::make_unique<agent::LlmEpisodes>(task, ev, llm, o);
}

}  // namespace kevo::cli
