// Claude Code (@anthropic-ai/claude-code) in print mode. What it needs beyond its documented flags
// (measured with 2.1.x against a loopback model): the MCP server marked "alwaysLoad", or under load
// the first model request can leave before the server is connected and the run ends without a tool;
// the kevo tools named in --allowedTools, or print mode denies each call (and still exits 0);
// IS_SANDBOX=1 as root, or it refuses bypassPermissions. Its shell and file tools stay on (the
// sandbox confines them); fetching the web is off.
#include <fmt/format.h>

#include "agent/cli_invocation.h"
#include "util/fs.h"

namespace kevo::agent {

namespace {

std::string allowed_tools(const AgentEpisodeSpec& spec) {
  std::string s;
  for (const auto& t : spec.mcp_tools) s += (s.empty() ? "" : ",") + ("mcp__" + spec.mcp_server_name + "__" + t);
  return s;
}

}  // namespace

nlohmann::json mcp_servers_json(const AgentEpisodeSpec& spec, const InvocationContext& ctx) {
  nlohmann::json server = {{"type", "stdio"},
                           {"command", ctx.mcp_command.at(0)},
                           {"args", std::vector<std::string>(ctx.mcp_command.begin() + 1, ctx.mcp_command.end())}};
  return {{"mcpServers", {{spec.mcp_server_name, server}}}};
}

Result<CliInvocation> claude_invocation(const AgentEpisodeSpec& spec, const InvocationContext& ctx) {
  nlohmann::json config = mcp_servers_json(spec, ctx);
  config["mcpServers"][spec.mcp_server_name]["alwaysLoad"] = true;
  const auto config_file = spec.control_dir / "claude-mcp.json";
  KEVO_TRY(write_file_atomic(config_file, config.dump(2) + "\n"));
  CliInvocation inv;
  inv.argv = {ctx.install.executable.string(), "-p", "--output-format", "json", "--model", spec.cli.model,
              "--mcp-config", config_file.string(), "--strict-mcp-config", "--allowedTools", allowed_tools(spec),
              "--disallowedTools", "WebFetch,WebSearch", "--permission-mode", "bypassPermissions",
              "--no-session-persistence"};
  if (spec.max_usd) {
    inv.argv.insert(inv.argv.end(), {"--max-budget-usd", fmt::format("{:.4f}", *spec.max_usd)});
    inv.usd_cap_applied = true;
  }
  if (!spec.api.base_url.empty()) inv.env["ANTHROPIC_BASE_URL"] = spec.api.base_url;
  if (!ctx.key.empty()) inv.env["ANTHROPIC_API_KEY"] = ctx.key;
  if (ctx.as_root) inv.env["IS_SANDBOX"] = "1";
  // Milliseconds: the server's start, and a tool call (an evaluation may take minutes).
  inv.env["MCP_TIMEOUT"] = "60000";
  inv.env["MCP_TOOL_TIMEOUT"] = std::to_string(std::chrono::milliseconds(spec.wall_limit).count());
  inv.read_only = ctx.install.read_only;
  inv.read_only.push_back(config_file);
  inv.stdin_data = spec.prompt;
  return inv;
}

CliOutput read_claude_output(const std::string& out) {
  CliOutput o;
  auto j = nlohmann::json::parse(out, nullptr, false);
  if (j.is_discarded()) {
    // Anything printed before the result object: take the last line that is one.
    for (size_t end = out.size(); end > 0 && j.is_discarded();) {
      size_t start = out.rfind('\n', end - 1);
      start = start == std::string::npos ? 0 : start + 1;
      j = nlohmann::json::parse(out.substr(start, end - start), nullptr, false);
      end = start > 0 ? start - 1 : 0;
    }
  }
  if (j.is_discarded() || !j.is_object()) {
    o.text = out;
    return o;
  }
  o.final_json = j;
  if (j.contains("result") && j["result"].is_string()) o.text = j["result"].get<std::string>();
  if (j.contains("total_cost_usd") && j["total_cost_usd"].is_number()) o.cost_usd = j["total_cost_usd"].get<double>();
  return o;
}

}  // namespace kevo::agent
