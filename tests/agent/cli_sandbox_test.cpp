// The agent's sandbox: a shell command run as an agent CLI's would be (the sandbox, the scrubbed
// environment) tries to read what an agent must never see, a run database, ~/.cache/kevo, another
// run's work folder, a task's held-out configs, and is refused each time, while its own workspace
// works. Also: secrets of /etc, other processes, TCP ports other than the model's, signals out.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "agent/cli_run.h"
#include "agent/sandbox.h"
#include "agent/sandbox_env.h"
#include "support/temp_dir.h"

using namespace kevo::agent;
using kevo::test::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

namespace {

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

// What another run and the user's machine hold beside the agent's workspace.
struct Host {
  TempDir t{"kevo-agent-sandbox"};
  fs::path workspace = t.path / "episode-1" / "work";
  fs::path run_db = t.path / "runs.db";
  fs::path cache = t.path / "home" / ".cache" / "kevo" / "compile" / "ab12" / "kernel.so";
  fs::path other_run = t.path / "episode-0" / "work" / "candidate.cu";
  fs::path held_out = t.path / "tasks" / "softmax" / "task.toml";
  Host() {
    fs::create_directories(workspace / ".home" / "tmp");
    write(run_db, "SQLite format 3 candidates verdicts");
    write(cache, "compiled kernel");
    write(other_run, "// another agent's kernel");
    write(held_out, "[[configs]]\nname = \"held\"\nheld_out = true\n");
  }
};

struct Outcome {
  int exit_code;
  std::string out, err;
};

Outcome sandboxed(const AgentSandbox& sb, const Host& h, const std::string& script,
                  std::map<std::string, std::string> add = {}) {
  CliRunOptions o;
  o.argv = {"/bin/bash", "-c", script};
  o.env = agent_environment({h.workspace / ".home", {}, std::move(add)});
  o.cwd = h.workspace;
  o.wall_limit = std::chrono::seconds(30);
  o.landlock_ruleset_fd = sb.ruleset_fd();
  auto r = run_cli(o);
  EXPECT_TRUE(r) << r.error().message;
  return r ? Outcome{r->exit_code, r->out, r->err} : Outcome{-1, "", ""};
}

AgentSandbox make(const Host& h, std::vector<int> ports = {}) {
  auto sb = make_agent_sandbox({h.workspace, {}, std::move(ports)});
  EXPECT_TRUE(sb) << sb.error().message;
  return sb ? std::move(*sb) : AgentSandbox();
}

}  // namespace

TEST(AgentSandbox, RefusesTheRunDatabaseTheCacheOtherRunsAndHeldOutData) {
  Host h;
  AgentSandbox sb = make(h);
  ASSERT_GE(sb.ruleset_fd(), 0);
  for (const fs::path& p : {h.run_db, h.cache, h.other_run, h.held_out}) {
    Outcome o = sandboxed(sb, h, "cat '" + p.string() + "'");
    EXPECT_NE(o.exit_code, 0) << p;
    EXPECT_THAT(o.err, HasSubstr("Permission denied")) << p;
    EXPECT_THAT(o.out, Not(HasSubstr("held_out"))) << p;
  }
  // Listing or writing beside the workspace is refused too: no peeking at the other episode.
  EXPECT_NE(sandboxed(sb, h, "ls '" + (h.t.path / "episode-0").string() + "'").exit_code, 0);
  EXPECT_NE(sandboxed(sb, h, "echo x > '" + (h.t.path / "episode-0" / "planted").string() + "'").exit_code, 0);
  EXPECT_FALSE(fs::exists(h.t.path / "episode-0" / "planted"));
}

TEST(AgentSandbox, RefusesTheRealCacheAndTheShippedTasksHeldOutConfigs) {
  Host h;
  AgentSandbox sb = make(h);
  const fs::path task = fs::path(KEVO_SOURCE_DIR) / "tasks" / "softmax" / "task.toml";
  ASSERT_TRUE(fs::exists(task));
  Outcome o = sandboxed(sb, h, "cat '" + task.string() + "'");
  EXPECT_NE(o.exit_code, 0);
  EXPECT_THAT(o.out, Not(HasSubstr("held_out")));
  const char* home = std::getenv("HOME");
  if (home && fs::exists(fs::path(home) / ".cache" / "kevo")) {
    EXPECT_NE(sandboxed(sb, h, "ls '" + (fs::path(home) / ".cache" / "kevo").string() + "'").exit_code, 0);
  }
  EXPECT_NE(sandboxed(sb, h, "ls /tmp").exit_code, 0);
}

TEST(AgentSandbox, ItsWorkspaceAndTheSystemWork) {
  Host h;
  AgentSandbox sb = make(h);
  Outcome o = sandboxed(sb, h,
                        "mkdir -p src && echo 'kernel' > src/k.cu && cat src/k.cu && "
                        "echo tmp > \"$TMPDIR/t\" && cat \"$TMPDIR/t\" && cat /etc/passwd | head -c 4 && echo && "
                        "printf '#!/bin/sh\\necho ran\\n' > run.sh && chmod +x run.sh && ./run.sh && rm src/k.cu && ls src");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, "kernel\ntmp\nroot\nran\n");
}

TEST(AgentSandbox, KeepsSecretsOfEtcAndOtherProcessesOut) {
  Host h;
  AgentSandbox sb = make(h);
  for (const char* secret : {"/etc/shadow", "/etc/gshadow", "/etc/ssl/private"}) {
    if (fs::exists(secret)) {
      EXPECT_NE(sandboxed(sb, h, std::string("ls -d ") + secret + " && cat " + secret).exit_code, 0) << secret;
    }
  }
  if (fs::exists("/etc/ssl/certs")) {
    EXPECT_EQ(sandboxed(sb, h, "ls /etc/ssl/certs >/dev/null").exit_code, 0);
  }
  // This test's own environment (kevo's, as an agent's parent) is out of reach; the kernel's
  // global figures are not.
  const std::string me = std::to_string(getpid());
  EXPECT_NE(sandboxed(sb, h, "cat /proc/" + me + "/environ").exit_code, 0);
  EXPECT_EQ(sandboxed(sb, h, "grep -c processor /proc/cpuinfo >/dev/null && head -1 /proc/meminfo >/dev/null").exit_code, 0);
  if (sb.confines_signals()) {
    EXPECT_NE(sandboxed(sb, h, "kill -0 " + me).exit_code, 0);
  }
}

TEST(AgentSandbox, TcpOnlyToTheModelsPort) {
  Host h;
  int model = socket(AF_INET, SOCK_STREAM, 0), other = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int ports[2];
  int* port = ports;
  for (int s : {model, other}) {
    a.sin_port = 0;
    ASSERT_EQ(bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ASSERT_EQ(listen(s, 4), 0);
    socklen_t len = sizeof a;
    getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
    *port++ = ntohs(a.sin_port);
  }
  AgentSandbox sb = make(h, {ports[0]});
  if (!sb.confines_tcp()) GTEST_SKIP() << "Landlock ABI " << sb.abi() << " does not confine TCP (needs 4)";
  auto connect_to = [&](int p) {
    return sandboxed(sb, h, "exec 3<>/dev/tcp/127.0.0.1/" + std::to_string(p) + " && echo connected").out;
  };
  EXPECT_EQ(connect_to(ports[0]), "connected\n");
  EXPECT_EQ(connect_to(ports[1]), "");
  close(model), close(other);
}

TEST(AgentSandbox, TheEnvironmentHoldsOnlyWhatTheCliNeeds) {
  Host h;
  AgentSandbox sb = make(h);
  setenv("OPENAI_API_KEY", "sk-other-provider", 1);
  setenv("KEVO_DB", "postgresql://user:pw@db/kevo", 1);
  Outcome o = sandboxed(sb, h, "env", {{"ANTHROPIC_API_KEY", "sk-the-model-key"}});
  unsetenv("OPENAI_API_KEY");
  unsetenv("KEVO_DB");
  EXPECT_THAT(o.out, HasSubstr("ANTHROPIC_API_KEY=sk-the-model-key"));
  EXPECT_THAT(o.out, HasSubstr("HOME=" + (h.workspace / ".home").string() + "\n"));
  EXPECT_THAT(o.out, HasSubstr("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"));
  EXPECT_THAT(o.out, Not(HasSubstr("sk-other-provider")));
  EXPECT_THAT(o.out, Not(HasSubstr("postgresql://")));
}

TEST(AgentSandbox, AMissingWorkspaceIsAnError) {
  TempDir t;
  auto sb = make_agent_sandbox({t.path / "nope", {}, {}});
  ASSERT_FALSE(sb);
  EXPECT_THAT(sb.error().message, HasSubstr("nope"));
}
