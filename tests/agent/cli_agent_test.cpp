// Agent CLI episodes without a real CLI: how each CLI is configured (the settings the real CLIs
// were measured to need), the MCP bridge end to end with a command-template "CLI" and a stand-in
// server, the wall-time limit, the model key kept out of files, and a CLI that is not installed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "agent/cli_agent.h"
#include "agent/cli_invocation.h"
#include "agent/cli_mcp_bridge.h"
#include "support/temp_dir.h"

using namespace kevo::agent;
using kevo::test::TempDir;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Running, not a zombie waiting for whoever reaps orphans here.
bool alive(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string pid_field, comm, state;
  return static_cast<bool>(stat >> pid_field >> comm >> state) && state != "Z";
}

const fs::path kBridge = fs::path(KEVO_BINARY_DIR) / "bin" / "kevo-mcp-bridge";

// An episode of a command-template "CLI" (a shell script) with a stand-in MCP server.
struct Episode {
  TempDir t{"kevo-agent-episode"};
  AgentEpisodeSpec spec;
  explicit Episode(const std::string& script) {
    fs::create_directories(t.path / "work");
    spec.cli.kind = AgentCliKind::kCommand;
    // $1 is the bridge's command line ("BRIDGE SOCKET"), split by the script's `set --`.
    spec.cli.command_template = "/bin/sh -c {prompt} agent {mcp_command}";
    spec.prompt = script;
    spec.workspace = t.path / "work";
    spec.control_dir = t.path / "control";
    spec.bridge_executable = kBridge;
    spec.mcp_command = {"/bin/sh", "-c", "read l; echo \"got:$l\"; echo server-stderr >&2"};
    spec.wall_limit = std::chrono::seconds(60);
    spec.mcp_grace = std::chrono::seconds(10);
  }
};

InvocationContext context(const Episode& e) {
  InvocationContext ctx;
  ctx.install.executable = "/opt/cli/bin/agent";
  ctx.install.read_only = {"/opt/cli/node_modules"};
  ctx.mcp_command = {kBridge.string(), (e.spec.control_dir / "mcp.sock").string()};
  ctx.home = e.spec.workspace / ".home";
  ctx.key = "sk-key-value";
  ctx.as_root = true;
  fs::create_directories(e.spec.control_dir);
  return ctx;
}

}  // namespace

TEST(AgentCliSpec, ParsesTheModelFlagsForms) {
  auto c = parse_agent_cli("claude-code:claude-sonnet-4-5");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->kind, AgentCliKind::kClaudeCode);
  EXPECT_EQ(c->model, "claude-sonnet-4-5");
  auto x = parse_agent_cli("codex:gpt-5-codex");
  ASSERT_TRUE(x);
  EXPECT_EQ(x->kind, AgentCliKind::kCodex);
  auto cmd = parse_agent_cli("command:opencode run {prompt}");
  ASSERT_TRUE(cmd);
  EXPECT_EQ(cmd->command_template, "opencode run {prompt}");
  EXPECT_THAT(parse_agent_cli("codex:").error().message, HasSubstr("nothing after codex:"));
  EXPECT_THAT(parse_agent_cli("gemini:pro").error().message, HasSubstr("unknown agent CLI 'gemini'"));
  EXPECT_TRUE(names_agent_cli("codex:o3"));
  EXPECT_FALSE(names_agent_cli("openai:gpt-4o"));
}

TEST(AgentCliSpec, ApiPortIsTheOneTcpPortTheCliMayReach) {
  EXPECT_EQ(*api_port("http://127.0.0.1:8123"), 8123);
  EXPECT_EQ(*api_port("http://127.0.0.1:8123/v1"), 8123);
  EXPECT_EQ(*api_port("https://api.anthropic.com"), 443);
  EXPECT_EQ(*api_port("http://[::1]:99/v1"), 99);
  EXPECT_FALSE(api_port("127.0.0.1:80"));
  EXPECT_FALSE(api_port("http://h:0"));
}

TEST(AgentCliInstall, ACliThatIsNotInstalledNamesTheNpmPackage) {
  auto claude = find_cli(AgentCliKind::kClaudeCode, fs::path("/nonexistent/claude"));
  ASSERT_FALSE(claude);
  EXPECT_EQ(claude.error().code, kevo::ErrorCode::kNotFound);
  EXPECT_THAT(claude.error().message, HasSubstr("npm install -g @anthropic-ai/claude-code@2.1."));
  auto codex = find_cli(AgentCliKind::kCodex, fs::path("/nonexistent/codex"));
  ASSERT_FALSE(codex);
  EXPECT_THAT(codex.error().message, HasSubstr("npm install -g @openai/codex@0.1"));

  Episode e("true");
  e.spec.cli.kind = AgentCliKind::kCodex;
  e.spec.cli.model = "m";
  e.spec.api.base_url = "http://127.0.0.1:1/v1";
  e.spec.cli_executable = "/nonexistent/codex";
  auto r = run_agent_episode(e.spec);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("@openai/codex"));
}

TEST(AgentCliConfig, ClaudeCodeLoadsKevoFirstAndMayCallItsTools) {
  Episode e("");
  e.spec.cli.kind = AgentCliKind::kClaudeCode;
  e.spec.cli.model = "kevo-test-model";
  e.spec.api.base_url = "http://127.0.0.1:9";
  e.spec.max_usd = 2.5;
  auto inv = claude_invocation(e.spec, context(e));
  ASSERT_TRUE(inv) << inv.error().message;
  auto config = nlohmann::json::parse(slurp(e.spec.control_dir / "claude-mcp.json"));
  EXPECT_EQ(config["mcpServers"]["kevo"]["alwaysLoad"], true);
  EXPECT_EQ(config["mcpServers"]["kevo"]["command"], kBridge.string());
  const auto& a = inv->argv;
  auto after = [&](const std::string& flag) {
    auto it = std::find(a.begin(), a.end(), flag);
    return it == a.end() || it + 1 == a.end() ? std::string() : *(it + 1);
  };
  EXPECT_EQ(after("--allowedTools"),
            "mcp__kevo__task,mcp__kevo__compile,mcp__kevo__evaluate,mcp__kevo__profile,mcp__kevo__history,"
            "mcp__kevo__submit");
  EXPECT_EQ(after("--output-format"), "json");
  EXPECT_EQ(after("--max-budget-usd"), "2.5000");
  EXPECT_THAT(a, Contains("-p"));
  EXPECT_THAT(a, Contains("--strict-mcp-config"));
  EXPECT_TRUE(inv->usd_cap_applied);
  EXPECT_EQ(inv->env.at("IS_SANDBOX"), "1");
  EXPECT_EQ(inv->env.at("ANTHROPIC_BASE_URL"), "http://127.0.0.1:9");
  EXPECT_EQ(inv->env.at("ANTHROPIC_API_KEY"), "sk-key-value");
  EXPECT_EQ(inv->stdin_data, e.spec.prompt);
  for (const auto& arg : a) EXPECT_THAT(arg, Not(HasSubstr("sk-key-value")));
}

TEST(AgentCliConfig, CodexGetsItsOwnHomeWithTheUndocumentedSettings) {
  Episode e("");
  e.spec.cli.kind = AgentCliKind::kCodex;
  e.spec.cli.model = "kevo-test-model";
  e.spec.api = {"http://127.0.0.1:9/v1", "KEVO_TEST_MODEL_KEY"};
  auto inv = codex_invocation(e.spec, context(e));
  ASSERT_TRUE(inv) << inv.error().message;
  const std::string toml = slurp(e.spec.workspace / ".home" / ".codex" / "config.toml");
  for (const char* line : {"wire_api = \"responses\"", "env_key = \"KEVO_TEST_MODEL_KEY\"", "[mcp_servers.kevo]",
                           "required = true", "default_tools_approval_mode = \"approve\"", "approval_policy = \"never\"",
                           "[features]\nplugins = false", "[analytics]\nenabled = false",
                           "base_url = \"http://127.0.0.1:9/v1\""})
    EXPECT_THAT(toml, HasSubstr(line));
  EXPECT_THAT(toml, Not(HasSubstr("sk-key-value")));
  EXPECT_EQ(inv->env.at("CODEX_HOME"), (e.spec.workspace / ".home" / ".codex").string());
  EXPECT_EQ(inv->env.at("KEVO_TEST_MODEL_KEY"), "sk-key-value");
  EXPECT_THAT(inv->argv, Contains("--json"));
  EXPECT_EQ(inv->argv.back(), "-");  // the prompt comes on stdin
  EXPECT_FALSE(inv->usd_cap_applied);
}

TEST(AgentCliOutput, ReadsEachClisFinalAnswer) {
  auto c = read_claude_output(
      R"({"type":"result","subtype":"success","is_error":false,"result":"submitted #2","total_cost_usd":0.125})"
      "\n");
  EXPECT_EQ(c.text, "submitted #2");
  ASSERT_TRUE(c.cost_usd);
  EXPECT_DOUBLE_EQ(*c.cost_usd, 0.125);
  auto x = read_codex_output(
      "{\"type\":\"thread.started\"}\nnot json\n"
      "{\"type\":\"item.completed\",\"item\":{\"type\":\"agent_message\",\"text\":\"first\"}}\n"
      "{\"type\":\"item.completed\",\"item\":{\"type\":\"agent_message\",\"text\":\"last\"}}\n"
      "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":5}}\n");
  EXPECT_EQ(x.text, "last");
  EXPECT_EQ(x.final_json["type"], "turn.completed");
}

TEST(AgentEpisode, TheCliReachesTheServerOnlyThroughTheBridge) {
  Episode e("set -- $1; echo ping | $1 $2 > reply.txt; cat reply.txt");
  auto r = run_agent_episode(e.spec);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->exit_code, 0) << r->stderr_tail;
  EXPECT_EQ(r->final_text, "got:ping");
  EXPECT_TRUE(r->mcp_connected);
  EXPECT_THAT(r->mcp_stderr_tail, HasSubstr("server-stderr"));
  EXPECT_FALSE(fs::exists(e.spec.control_dir / "mcp.sock"));  // one session, then the socket is gone
}

TEST(AgentEpisode, OneSessionOnly) {
  TempDir t;
  auto host = McpBridgeHost::start(t.path / "s.sock", {"/bin/cat"}, {}, t.path / "err.log");
  ASSERT_TRUE(host) << host.error().message;
  auto dial = [&] {
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::snprintf(a.sun_path, sizeof a.sun_path, "%s", (t.path / "s.sock").c_str());
    if (connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      close(s);
      return -1;
    }
    return s;
  };
  int first = dial();
  ASSERT_GE(first, 0);
  ASSERT_EQ(write(first, "hi\n", 3), 3);
  char buf[8] = {};
  ASSERT_EQ(read(first, buf, 3), 3);  // the stand-in server echoes
  EXPECT_STREQ(buf, "hi\n");
  EXPECT_LT(dial(), 0);
  shutdown(first, SHUT_WR);
  (*host)->finish(std::chrono::seconds(5));
  close(first);
  ASSERT_TRUE((*host)->server_status());
  EXPECT_EQ(*(*host)->server_status(), 0);  // cat saw the end of its stdin and exited
}

TEST(AgentEpisode, TheWallLimitEndsTheCliAndWhatItLeftRunning) {
  Episode e("sleep 300 & echo $! > bg.pid; sleep 300");
  e.spec.wall_limit = std::chrono::seconds(1);
  auto r = run_agent_episode(e.spec);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->timed_out);
  EXPECT_LT(r->wall_seconds, 10);
  EXPECT_THAT(r->describe(), HasSubstr("timed out"));
  const std::string pid = slurp(e.spec.workspace / "bg.pid");
  ASSERT_FALSE(pid.empty());
  EXPECT_FALSE(alive(std::stoi(pid)));  // the background sleep went with the CLI's group
}

TEST(AgentEpisode, ACliThatFailsIsAResultNotAnError) {
  Episode e("echo 'cannot go on' >&2; exit 3");
  auto r = run_agent_episode(e.spec);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_FALSE(r->timed_out);
  EXPECT_EQ(r->stderr_tail, "cannot go on\n");
  EXPECT_FALSE(r->mcp_connected);
  EXPECT_THAT(r->describe(), HasSubstr("exit code 3"));
}

TEST(AgentEpisode, TheKeyReachesTheCliOnlyAndNoFile) {
  setenv("KEVO_TEST_AGENT_KEY", "sk-agent-episode-key", 1);
  setenv("OPENAI_API_KEY", "sk-not-for-the-agent", 1);
  Episode e("env; echo leftover > file.txt");
  e.spec.api = {"http://127.0.0.1:9", "KEVO_TEST_AGENT_KEY"};
  auto r = run_agent_episode(e.spec);
  unsetenv("OPENAI_API_KEY");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_THAT(r->final_text, HasSubstr("KEVO_TEST_AGENT_KEY=sk-agent-episode-key"));
  EXPECT_THAT(r->final_text, Not(HasSubstr("sk-not-for-the-agent")));
  for (const auto& f : fs::recursive_directory_iterator(e.t.path))
    if (f.is_regular_file()) {
      EXPECT_THAT(slurp(f.path()), Not(HasSubstr("sk-agent-episode-key"))) << f.path();
    }
  unsetenv("KEVO_TEST_AGENT_KEY");
  e.spec.api.key_env = "KEVO_TEST_AGENT_KEY";
  auto unset = run_agent_episode(e.spec);
  ASSERT_FALSE(unset);
  EXPECT_THAT(unset.error().message, HasSubstr("KEVO_TEST_AGENT_KEY is not set"));
}
