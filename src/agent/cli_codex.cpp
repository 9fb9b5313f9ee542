// Codex (@openai/codex) in `codex exec --json`, configured by a config.toml of its own in a private
// CODEX_HOME. What it needs beyond its documented settings (measured with 0.169-0.17x against a
// loopback model): the MCP server `required`, or under load the first request can leave before it
// is connected; `default_tools_approval_mode = "approve"`, since with approval_policy "never" it
// refuses MCP calls otherwise; plugins and analytics off, or it reaches github.com and chatgpt.com.
// Its own sandbox is off (danger-full-access): kevo's sandbox confines it and everything it starts.
#include <fmt/format.h>

#include <sstream>

#include "agent/cli_invocation.h"
#include "util/fs.h"

namespace kevo::agent {

namespace {

// A TOML basic string: JSON's escapes are TOML's.
std::string toml_string(const std::string& s) { return nlohmann::json(s).dump(); }

std::string config_toml(const AgentEpisodeSpec& spec, const InvocationContext& ctx) {
  std::ostringstream t;
  t << "model = " << toml_string(spec.cli.model) << "\n"
    << "model_provider = \"kevo\"\n"
    << "approval_policy = \"never\"\n"
    << "sandbox_mode = \"danger-full-access\"\n"
    << "check_for_update_on_startup = false\n\n"
    << "[model_providers.kevo]\n"
    << "name = \"kevo\"\n"
    << "base_url = " << toml_string(spec.api.base_url) << "\n"
    << "wire_api = \"responses\"\n";
  if (!spec.api.key_env.empty()) t << "env_key = " << toml_string(spec.api.key_env) << "\n";
  t << "\n[mcp_servers." << spec.mcp_server_name << "]\n"
    << "command = " << toml_string(ctx.mcp_command.at(0)) << "\n"
    << "args = [";
  for (size_t i = 1; i < ctx.mcp_command.size(); ++i) t << (i > 1 ? ", " : "") << toml_string(ctx.mcp_command[i]);
  t << "]\n"
    << "required = true\n"
    << "default_tools_approval_mode = \"approve\"\n"
    << "startup_timeout_sec = 60\n"
    << "tool_timeout_sec = " << spec.wall_limit.count() << "\n\n"
    << "[features]\nplugins = false\n\n"
    << "[analytics]\nenabled = false\n";
  return t.str();
}

}  // namespace

Result<CliInvocation> codex_invocation(const AgentEpisodeSpec& spec, const InvocationContext& ctx) {
  if (spec.api.base_url.empty()) return fail("codex: no model API base URL (model_providers.kevo.base_url)");
  const auto codex_home = ctx.home / ".codex";
  KEVO_TRY(write_file_atomic(codex_home / "config.toml", config_toml(spec, ctx)));
  CliInvocation inv;
  inv.argv = {ctx.install.executable.string(), "exec", "--json", "--skip-git-repo-check", "--ephemeral",
              "-C", spec.workspace.string(), "-m", spec.cli.model, "-"};
  inv.env["CODEX_HOME"] = codex_home.string();
  if (!spec.api.key_env.empty()) inv.env[spec.api.key_env] = ctx.key;
  inv.read_only = ctx.install.read_only;
  inv.stdin_data = spec.prompt;
  return inv;
}

CliOutput read_codex_output(const std::string& out) {
  CliOutput o;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    auto ev = nlohmann::json::parse(line, nullptr, false);
    if (ev.is_discarded() || !ev.is_object()) continue;
    o.final_json = ev;
    const auto& item = ev.contains("item") ? ev["item"] : nlohmann::json();
    if (ev.value("type", "") == "item.completed" && item.is_object() && item.value("type", "") == "agent_message")
      o.text = item.value("text", "");
  }
  return o;
}

}  // namespace kevo::agent
