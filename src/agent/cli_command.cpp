// Any other agent CLI, from a command template: words split at spaces (no shell), each word's
// placeholders replaced:
//   {prompt}      the prompt as one argument (it also arrives on stdin)
//   {prompt_file} a file holding the prompt
//   {mcp_config}  a JSON file {"mcpServers": {"kevo": {"command": ..., "args": [...]}}}, the form
//                 Cursor, Claude Desktop, Gemini CLI and most MCP clients read
//   {mcp_command} the stdio MCP server's command line, its words joined by spaces
//   {workspace}   the workspace; {base_url} the model API's base URL
// The model key arrives in the variable kevo read it from (ModelApi::key_env), under the same name.
#include <sstream>

#include "agent/cli_invocation.h"
#include "util/fs.h"

namespace kevo::agent {

namespace {

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
}

}  // namespace

Result<CliInvocation> command_invocation(const AgentEpisodeSpec& spec, const InvocationContext& ctx) {
  const auto prompt_file = spec.control_dir / "prompt.txt", mcp_file = spec.control_dir / "mcp.json";
  KEVO_TRY(write_file_atomic(prompt_file, spec.prompt));
  KEVO_TRY(write_file_atomic(mcp_file, mcp_servers_json(spec, ctx).dump(2) + "\n"));
  std::string mcp_command;
  for (const auto& w : ctx.mcp_command) mcp_command += (mcp_command.empty() ? "" : " ") + w;
  // The prompt last, so that braces in its text are left as they are.
  const std::pair<const char*, std::string> subst[] = {
      {"{prompt_file}", prompt_file.string()}, {"{mcp_config}", mcp_file.string()},
      {"{mcp_command}", mcp_command},          {"{workspace}", spec.workspace.string()},
      {"{base_url}", spec.api.base_url},       {"{prompt}", spec.prompt}};
  CliInvocation inv;
  std::istringstream words(spec.cli.command_template);
  for (std::string w; words >> w;) {
    for (const auto& [from, to] : subst) replace_all(w, from, to);
    inv.argv.push_back(w);
  }
  if (inv.argv.empty()) return fail("command: the template '{}' has no command", spec.cli.command_template);
  inv.argv[0] = ctx.install.executable.string();
  if (!spec.api.key_env.empty()) inv.env[spec.api.key_env] = ctx.key;
  inv.read_only = ctx.install.read_only;
  inv.read_only.insert(inv.read_only.end(), {prompt_file, mcp_file});
  inv.stdin_data = spec.prompt;
  return inv;
}

CliOutput read_command_output(const std::string& out) {
  CliOutput o;
  o.text = out;
  while (!o.text.empty() && (o.text.back() == '\n' || o.text.back() == ' ')) o.text.pop_back();
  return o;
}

}  // namespace kevo::agent
