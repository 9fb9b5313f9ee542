// How each agent CLI is started: its command line, the files it is configured with, its own
// environment variables and what the sandbox must let it read; and how its output is read back.
// One builder per CLI (cli_claude.cpp, cli_codex.cpp, cli_command.cpp).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/cli_episode.h"
#include "agent/cli_install.h"
#include "util/result.h"

namespace kevo::agent {

// What every builder is given besides the spec.
struct InvocationContext {
  CliInstall install;
  std::vector<std::string> mcp_command;  // the bridge: {kevo-mcp-bridge, SOCKET}
  std::filesystem::path home;            // the agent's HOME, inside the workspace
  std::string key;                       // the model key's value ("" when none)
  bool as_root = false;                  // CLIs refuse their no-prompt modes as root unless told
};

struct CliInvocation {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;  // the CLI's own variables (added to agent_environment)
  std::vector<std::filesystem::path> read_only;
  std::string stdin_data;                  // the prompt: no argument length limit, nothing in ps
  bool usd_cap_applied = false;
};

struct CliOutput {
  std::string text;
  nlohmann::json final_json;
  std::optional<double> cost_usd;
};

// Write their configuration files (under spec.control_dir, or the agent's HOME where the CLI must
// write beside them); errors name the file.
Result<CliInvocation> claude_invocation(const AgentEpisodeSpec& spec, const InvocationContext& ctx);
Result<CliInvocation> codex_invocation(const AgentEpisodeSpec& spec, const InvocationContext& ctx);
Result<CliInvocation> command_invocation(const AgentEpisodeSpec& spec, const InvocationContext& ctx);

// `claude -p --output-format json`: one result object on stdout.
CliOutput read_claude_output(const std::string& out);
// `codex exec --json`: one event per line; the last agent_message item is the final text.
CliOutput read_codex_output(const std::string& out);
// Any other CLI: its stdout, trimmed.
CliOutput read_command_output(const std::string& out);

// The MCP server entry most CLIs read ({"mcpServers": {NAME: {"command": ..., "args": [...]}}}).
nlohmann::json mcp_servers_json(const AgentEpisodeSpec& spec, const InvocationContext& ctx);

}  // namespace kevo::agent
