// One episode of an agent CLI: what it is given (the CLI and model, the model API, kevo's MCP
// server command, a fresh workspace, limits) and what came of it. What the episode achieved is
// what kevo's MCP server recorded in the run database (its candidates, its submitted result), never
// the CLI's exit status or words: every CLI here exits 0 when its tool calls failed too.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/cli_kind.h"

namespace kevo::agent {

struct ModelApi {
  std::string base_url;  // the API's root: "https://api.anthropic.com", "http://127.0.0.1:8080/v1"
  // The variable of kevo's environment holding the key (empty: none). Its value reaches the CLI's
  // environment only, under the name the CLI reads; never an argument, a file or a log.
  std::string key_env;
};

struct AgentEpisodeSpec {
  AgentCliSpec cli;
  std::optional<std::filesystem::path> cli_executable;  // default: found on PATH (cli_install.h)
  ModelApi api;
  // `kevo mcp TASK --db ...`: run outside the sandbox, reached through the MCP bridge.
  std::vector<std::string> mcp_command;
  // Or the session served in this process (a search's episode): called with the connection, it
  // returns when the client's side has closed. Set one of the two.
  std::function<void(int fd)> mcp_serve;
  // Polled while the CLI runs: true ends the episode as its wall-time limit does.
  std::function<bool()> stop;
  std::string mcp_server_name = "kevo";
  std::vector<std::string> mcp_tools = {"task", "compile", "evaluate", "profile", "history", "submit"};
  std::filesystem::path workspace;    // fresh: the files the agent may read and write
  std::filesystem::path control_dir;  // fresh, outside the workspace: configs, the MCP socket, logs
  std::string prompt;
  std::chrono::seconds wall_limit{1800};
  std::optional<double> max_usd;  // where the CLI has a dollar cap (Claude Code)
  // How long the MCP server may take to finish after the CLI ended (an evaluation in flight).
  std::chrono::seconds mcp_grace{60};
  std::vector<std::filesystem::path> read_only;  // more paths the agent may read
  std::filesystem::path bridge_executable;       // default: kevo-mcp-bridge beside this program
};

struct AgentEpisodeResult {
  int exit_code = -1;  // valid when !signaled && !timed_out
  int term_signal = 0;
  bool signaled = false;
  bool timed_out = false;
  double wall_seconds = 0;
  std::string final_text;            // the agent's last message, when the CLI's output has one
  nlohmann::json final_json;         // Claude Code: its result object; Codex: its last event; null: none
  std::optional<double> cost_usd;    // what the CLI says it spent
  bool usd_cap_applied = false;      // whether max_usd reached the CLI
  std::string stderr_tail;           // the CLI's last 8 KiB of stderr
  bool mcp_connected = false;        // the CLI opened the MCP session
  std::string mcp_stderr_tail;       // kevo mcp's last 8 KiB of stderr
  std::string mcp_start_error;       // why kevo mcp did not start, if it did not
  std::string describe() const;      // "exit code 0 after 12.3 s", "timed out after 1800.0 s", ...
};

}  // namespace kevo::agent
