#include "agent/cli_kind.h"

namespace kevo::agent {

namespace {

struct Name {
  AgentCliKind kind;
  const char* text;
};
constexpr Name kNames[] = {{AgentCliKind::kClaudeCode, "claude-code"},
                           {AgentCliKind::kCodex, "codex"},
                           {AgentCliKind::kCommand, "command"}};

}  // namespace

const char* to_string(AgentCliKind k) {
  for (const auto& n : kNames)
    if (n.kind == k) return n.text;
  return "claude-code";
}

Result<AgentCliKind> parse_agent_cli_kind(std::string_view text) {
  for (const auto& n : kNames)
    if (text == n.text) return n.kind;
  return fail("unknown agent CLI '{}' (claude-code, codex or command)", text);
}

bool names_agent_cli(std::string_view text) {
  const auto colon = text.find(':');
  return colon != std::string_view::npos && parse_agent_cli_kind(text.substr(0, colon));
}

Result<AgentCliSpec> parse_agent_cli(std::string_view text) {
  const auto colon = text.find(':');
  if (colon == std::string_view::npos)
    return fail("agent CLI '{}': expected claude-code:MODEL, codex:MODEL or command:TEMPLATE", text);
  auto kind = parse_agent_cli_kind(text.substr(0, colon));
  if (!kind) return kind.unexpected();
  const std::string rest(text.substr(colon + 1));
  if (rest.empty())
    return fail("agent CLI '{}': nothing after {}:", text, to_string(*kind));
  AgentCliSpec s;
  s.kind = *kind;
  (s.kind == AgentCliKind::kCommand ? s.command_template : s.model) = rest;
  return s;
}

}  // namespace kevo::agent
