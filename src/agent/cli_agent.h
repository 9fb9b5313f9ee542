// Runs one episode of an agent CLI (Claude Code, Codex, or a command template) on kevo's MCP
// server: writes the CLI's configuration, starts kevo's MCP server behind the bridge
// (cli_mcp_bridge.h), runs the CLI non-interactively in its sandbox (sandbox.h) with a scrubbed
// environment (sandbox_env.h) until it ends or its wall-time limit, and returns what it said.
// What the episode achieved is what the MCP server recorded (cli_episode.h).
#pragma once

#include "agent/cli_episode.h"
#include "util/result.h"

namespace kevo::agent {

// Fails, naming the cause, when the episode could not start: the CLI is not installed (the message
// names the npm package), the key's variable is unset, the workspace is missing, Landlock is
// missing. Everything after the start is in the result.
Result<AgentEpisodeResult> run_agent_episode(const AgentEpisodeSpec& spec);

// The TCP port of an API base URL (its explicit port, else 443 for https and 80 for http); the one
// port the sandbox lets the CLI connect to. Errors name the URL.
Result<int> api_port(const std::string& base_url);

}  // namespace kevo::agent
