// Which agent CLI an episode runs, as `kevo evolve --model` names it: `claude-code:MODEL`,
// `codex:MODEL`, or `command:TEMPLATE` for any other CLI (cli_command.h says what the template may
// hold).
#pragma once

#include <string>
#include <string_view>

#include "util/result.h"

namespace kevo::agent {

enum class AgentCliKind { kClaudeCode, kCodex, kCommand };

const char* to_string(AgentCliKind k);  // "claude-code", "codex", "command"
Result<AgentCliKind> parse_agent_cli_kind(std::string_view text);

struct AgentCliSpec {
  AgentCliKind kind = AgentCliKind::kClaudeCode;
  std::string model;             // the model the CLI asks its API for
  std::string command_template;  // kCommand only
};

// Whether `text` names an agent CLI at all ("claude-code:", "codex:", "command:"), so that a model
// list can tell them from LLM providers.
bool names_agent_cli(std::string_view text);
// Errors name what is wrong ("codex:: no model after codex:").
Result<AgentCliSpec> parse_agent_cli(std::string_view text);

}  // namespace kevo::agent
