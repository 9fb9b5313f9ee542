#include "agent/cli_agent.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "agent/cli_invocation.h"
#include "agent/cli_mcp_bridge.h"
#include "agent/cli_run.h"
#include "agent/sandbox.h"
#include "agent/sandbox_env.h"

namespace kevo::agent {

namespace fs = std::filesystem;

namespace {

bool inside(const fs::path& a, const fs::path& b) {  // a at or beneath b
  auto [ai, bi] = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
  return bi == b.end();
}

Status check_folders(const AgentEpisodeSpec& spec) {
  std::error_code ec;
  if (!fs::is_directory(spec.workspace, ec)) return fail("agent episode: the workspace {} is not a folder", spec.workspace.string());
  fs::create_directories(spec.control_dir, ec);
  if (ec) return fail("agent episode: cannot make {}: {}", spec.control_dir.string(), ec.message());
  ::chmod(spec.control_dir.c_str(), 0700);  // the MCP socket lives here
  const fs::path w = fs::canonical(spec.workspace, ec), c = fs::canonical(spec.control_dir, ec);
  if (inside(w, c) || inside(c, w))
    return fail("agent episode: the control folder {} and the workspace {} must not contain each other",
                spec.control_dir.string(), spec.workspace.string());
  if (spec.mcp_command.empty() == !spec.mcp_serve)
    return fail("agent episode: give either an MCP server command or a session to serve, not {}",
                spec.mcp_command.empty() ? "neither" : "both");
  return {};
}

Result<std::string> model_key(const ModelApi& api) {
  if (api.key_env.empty()) return std::string();
  const char* v = std::getenv(api.key_env.c_str());
  if (!v || !*v) return fail("agent episode: {} is not set (the model API key the CLI is to use)", api.key_env);
  return std::string(v);
}

fs::path default_bridge() {
  std::error_code ec;
  return fs::read_symlink("/proc/self/exe", ec).parent_path() / "kevo-mcp-bridge";
}

Result<fs::path> cli_executable(const AgentEpisodeSpec& spec) {
  if (spec.cli.kind != AgentCliKind::kCommand) return find_cli(spec.cli.kind, spec.cli_executable);
  const std::string& t = spec.cli.command_template;
  const size_t b = t.find_first_not_of(' '), e = t.find(' ', b);
  if (b == std::string::npos) return fail("command: an empty template");
  return find_cli(AgentCliKind::kCommand, spec.cli_executable.value_or(fs::path(t.substr(b, e - b))));
}

Result<CliInvocation> invocation(const AgentEpisodeSpec& spec, const InvocationContext& ctx) {
  switch (spec.cli.kind) {
    case AgentCliKind::kClaudeCode: return claude_invocation(spec, ctx);
    case AgentCliKind::kCodex: return codex_invocation(spec, ctx);
    case AgentCliKind::kCommand: return command_invocation(spec, ctx);
  }
  return fail("agent episode: unknown CLI");
}

CliOutput read_output(AgentCliKind kind, const std::string& out) {
  switch (kind) {
    case AgentCliKind::kClaudeCode: return read_claude_output(out);
    case AgentCliKind::kCodex: return read_codex_output(out);
    case AgentCliKind::kCommand: return read_command_output(out);
  }
  return read_command_output(out);
}

// Everything the CLI's start needs: its invocation, its sandbox, its environment.
struct Prepared {
  CliInvocation inv;
  AgentSandbox sandbox;
  std::vector<std::string> env;
  fs::path socket;
};

Result<Prepared> prepare(const AgentEpisodeSpec& spec) {
  KEVO_TRY(check_folders(spec));
  auto key = model_key(spec.api);
  if (!key) return key.unexpected();
  auto exe = cli_executable(spec);
  if (!exe) return exe.unexpected();
  InvocationContext ctx;
  ctx.install = cli_install(*exe);
  ctx.home = spec.workspace / ".home";
  ctx.key = *key;
  ctx.as_root = geteuid() == 0;
  std::error_code ec;
  fs::create_directories(ctx.home / "tmp", ec);
  if (ec) return fail("agent episode: cannot make {}: {}", (ctx.home / "tmp").string(), ec.message());
  const fs::path bridge = spec.bridge_executable.empty() ? default_bridge() : spec.bridge_executable;
  if (access(bridge.c_str(), X_OK) != 0) return fail("agent episode: the MCP bridge {} is not there (build kevo-mcp-bridge)", bridge.string());
  Prepared p;
  p.socket = spec.control_dir / "mcp.sock";
  ctx.mcp_command = {bridge.string(), p.socket.string()};
  auto inv = invocation(spec, ctx);
  if (!inv) return inv.unexpected();
  p.inv = std::move(*inv);
  AgentSandboxSpec sb{spec.workspace, p.inv.read_only, {}};
  sb.read_only.push_back(bridge);
  sb.read_only.insert(sb.read_only.end(), spec.read_only.begin(), spec.read_only.end());
  if (!spec.api.base_url.empty()) {
    auto port = api_port(spec.api.base_url);
    if (!port) return port.unexpected();
    sb.connect_ports.push_back(*port);
  }
  auto sandbox = make_agent_sandbox(sb);
  if (!sandbox) return sandbox.unexpected();
  p.sandbox = std::move(*sandbox);
  p.env = agent_environment({ctx.home, ctx.install.path_dirs, p.inv.env});
  return p;
}

}  // namespace

Result<int> api_port(const std::string& base_url) {
  const size_t scheme_end = base_url.find("://");
  if (scheme_end == std::string::npos) return fail("model API '{}': not a URL (http://HOST:PORT/...)", base_url);
  const std::string scheme = base_url.substr(0, scheme_end);
  std::string host = base_url.substr(scheme_end + 3);
  host = host.substr(0, host.find('/'));
  const size_t colon = host.rfind(':');
  if (colon != std::string::npos && host.find(']', colon) == std::string::npos) {
    const std::string digits = host.substr(colon + 1);
    char* end = nullptr;
    const long port = std::strtol(digits.c_str(), &end, 10);
    if (digits.empty() || *end || port < 1 || port > 65535) return fail("model API '{}': bad port '{}'", base_url, digits);
    return static_cast<int>(port);
  }
  if (scheme == "https") return 443;
  if (scheme == "http") return 80;
  return fail("model API '{}': unknown scheme '{}'", base_url, scheme);
}

std::string AgentEpisodeResult::describe() const {
  if (timed_out) return fmt::format("timed out after {:.1f} s", wall_seconds);
  if (signaled) return fmt::format("killed by signal {} after {:.1f} s", term_signal, wall_seconds);
  return fmt::format("exit code {} after {:.1f} s", exit_code, wall_seconds);
}

Result<AgentEpisodeResult> run_agent_episode(const AgentEpisodeSpec& spec) {
  auto p = prepare(spec);
  if (!p) return p.unexpected();
  // kevo mcp gets kevo's environment, less the model key: it has no use for it.
  std::vector<std::string> drop;
  if (!spec.api.key_env.empty()) drop.push_back(spec.api.key_env);
  auto bridge = spec.mcp_serve ? McpBridgeHost::start_in_process(p->socket, spec.mcp_serve)
                               : McpBridgeHost::start(p->socket, spec.mcp_command, drop, spec.control_dir / "mcp-stderr.log");
  if (!bridge) return bridge.unexpected();
  CliRunOptions ro;
  ro.argv = p->inv.argv;
  ro.env = p->env;
  ro.cwd = spec.workspace;
  ro.stdin_data = p->inv.stdin_data;
  ro.wall_limit = spec.wall_limit;
  ro.landlock_ruleset_fd = p->sandbox.ruleset_fd();
  ro.stop = spec.stop;
  auto run = run_cli(ro);
  (*bridge)->finish(run ? std::chrono::milliseconds(spec.mcp_grace) : std::chrono::milliseconds(0));
  if (!run) return run.unexpected();
  AgentEpisodeResult r;
  r.exit_code = run->exit_code, r.term_signal = run->term_signal, r.signaled = run->signaled;
  r.timed_out = run->timed_out, r.wall_seconds = run->wall_seconds;
  r.stderr_tail = run->err;
  CliOutput out = read_output(spec.cli.kind, run->out);
  r.final_text = std::move(out.text), r.final_json = std::move(out.final_json), r.cost_usd = out.cost_usd;
  r.usd_cap_applied = p->inv.usd_cap_applied;
  r.mcp_connected = (*bridge)->connected();
  r.mcp_stderr_tail = (*bridge)->stderr_tail();
  r.mcp_start_error = (*bridge)->start_error();
  return r;
}

}  // namespace kevo::agent
