// Episodes of the real agent CLIs, Claude Code and Codex at the versions scripts/agent-clis.sh pins,
// on `kevo mcp --fake-gpu`, driven by the scripted loopback model server: each CLI calls task,
// evaluates a known-good kernel and a known-bad one, and submits the good one. What is asserted is
// what kevo recorded in the run database, never the CLI's exit status (every failure here exits 0).
// The whole test runs in a network namespace with loopback only, so a CLI that reaches for
// anything but the model server fails it; the server's log is checked for unexpected requests too.
// Skipped, visibly, only where npm cannot install the CLIs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "../evolve/harness.h"
#include "agent/cli_agent.h"
#include "agent/cli_episodes.h"
#include "agent/cli_install.h"
#include "cli_netns.h"
#include <netdb.h>

#include <cstring>
#include <thread>
#include "results/run_final.h"
#include "store/run_db.h"
#include "support/fake_model_server.h"
#include "support/temp_dir.h"

using namespace kevo;
using namespace kevo::agent;
using kevo::test::TempDir;
using nlohmann::json;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

namespace {

const fs::path kBin = fs::path(KEVO_BINARY_DIR) / "bin";
constexpr const char* kGood =
    "// fake: pass time_ms=1.25\n#include <kevo/kernel.h>\nKEVO_EXPORT int kevo_forward(const kevo_args* a) { return 0; }\n";
constexpr const char* kBad =
    "// fake: incorrect out[0] = 0.5, expected 0.25\n#include <kevo/kernel.h>\n"
    "KEVO_EXPORT int kevo_forward(const kevo_args* a) { return 0; }\n";

// The CLIs' executables, installed (or found cached) before any test leaves the host's network.
struct Installed {
  fs::path claude, codex;
  std::string why_not;  // non-empty: npm could not install them
  double seconds = 0;
};

const Installed& installed() {
  static const Installed inst = [] {
    Installed i;
    const auto start = std::chrono::steady_clock::now();
    const std::string cmd = fs::path(KEVO_SOURCE_DIR).string() + "/scripts/agent-clis.sh " +
                            (fs::path(KEVO_BINARY_DIR) / "agent-clis").string() + " 2>&1";
    std::string out;
    if (FILE* p = popen(cmd.c_str(), "r")) {
      char buf[4096];
      while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
      if (pclose(p) != 0) i.why_not = "scripts/agent-clis.sh could not install the CLIs: " + out;
    }
    std::istringstream lines(out);
    for (std::string name, path; lines >> name >> path;) (name == "claude" ? i.claude : i.codex) = path;
    if (i.why_not.empty() && (i.claude.empty() || i.codex.empty())) i.why_not = "scripts/agent-clis.sh said: " + out;
    i.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return i;
  }();
  return inst;
}

// Entered once per test process, after the install, with its tripwire.
struct Network {
  std::string why_not;
  kevo::test::Tripwire tripwire;
};

Network& network() {
  static Network* n = [] {
    auto* m = new Network;  // lives as long as the process: its thread watches to the end
    m->why_not = kevo::test::enter_loopback_netns();
    if (m->why_not.empty()) m->why_not = m->tripwire.start();
    return m;
  }();
  return *n;
}

// Where a connection to a public address lands: the tripwire on this machine, nowhere else.
std::string outside_answer() {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(443);
  inet_pton(AF_INET, "1.1.1.1", &a.sin_addr);
  const bool ok = connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  close(s);
  return ok ? "connected" : strerror(errno);
}

// What an agent must never read: the run database kevo mcp writes, a kevo cache, another run's
// work folder, the task's held-out configs. The CLI's own shell tool tries each and writes what
// happened into the workspace.
struct Forbidden {
  fs::path db, cache, other_run, held_out;
};

std::string probe_command(const Forbidden& f, const fs::path& workspace) {
  // The workspace's own file first: what is refused is refused by the sandbox, not a broken cat.
  std::string cmd = "echo mine > '" + (workspace / "own.txt").string() + "'; for p in '" + (workspace / "own.txt").string() + "'";
  for (const fs::path& p : {f.db, f.cache, f.other_run, f.held_out}) cmd += " '" + p.string() + "'";
  return cmd + "; do if cat \"$p\" >/dev/null 2>&1; then echo \"read $p\"; else echo \"refused $p\"; fi; done > '" +
         (workspace / "probe.txt").string() + "'";
}

// The CLI's own shell tool, as each calls it.
json shell_call(AgentCliKind kind, const std::string& cmd) {
  if (kind == AgentCliKind::kCodex) return {{"tool", "exec_command"}, {"arguments", {{"cmd", cmd}, {"login", false}}}};
  return {{"tool", "Bash"}, {"arguments", {{"command", cmd}, {"description", "Try to read files outside the workspace"}}}};
}

test::ModelScript script(AgentCliKind kind, const std::string& probe) {
  auto one = [](json call) { return json{{"tool_calls", json::array({std::move(call)})}}; };
  auto s = test::parse_model_script(json{
      {"server", "kevo"},
      {"turns", json::array({one({{"tool", "task"}, {"arguments", json::object()}}), one(shell_call(kind, probe)),
                             one({{"tool", "evaluate"},
                                  {"arguments", {{"source", kGood}, {"name", "good"}, {"idea", "the baseline, marked fast"}}}}),
                             one({{"tool", "evaluate"}, {"arguments", {{"source", kBad}, {"name", "bad"}}}}),
                             one({{"tool", "submit"}, {"arguments", {{"source", kGood}}}}),
                             {{"text", "Submitted the good kernel."}}})}});
  EXPECT_TRUE(s) << s.error().message;
  return *s;
}

struct EpisodeRun {
  TempDir t{"kevo-cli-episode"};
  std::unique_ptr<test::FakeModelServer> model;
  Result<AgentEpisodeResult> result = fail("not run");
  fs::path db = t.path / "runs.db", workspace = t.path / "work";
  Forbidden forbidden{db, t.path / "home" / ".cache" / "kevo" / "compile" / "k.so",
                      t.path / "episode-0" / "work" / "candidate.cu",
                      fs::path(KEVO_SOURCE_DIR) / "tasks" / "softmax" / "task.toml"};
  EpisodeRun() {
    for (const fs::path& p : {forbidden.cache, forbidden.other_run}) {
      fs::create_directories(p.parent_path());
      std::ofstream(p) << "not for the agent\n";
    }
    fs::create_directories(workspace);
  }
};

void run(EpisodeRun& e, AgentCliKind kind, const fs::path& exe) {
  auto server = test::FakeModelServer::start(script(kind, probe_command(e.forbidden, e.workspace)),
                                             e.t.path / "model-requests.jsonl");
  ASSERT_TRUE(server) << server.error().message;
  e.model = std::move(*server);
  setenv("KEVO_TEST_MODEL_KEY", "sk-kevo-test-not-a-real-key", 1);
  AgentEpisodeSpec spec;
  spec.cli.kind = kind;
  spec.cli.model = "kevo-scripted-model";  // a made-up name: Codex hides MCP tools behind a search for real ones
  spec.cli_executable = exe;
  spec.api.base_url = e.model->base_url() + (kind == AgentCliKind::kCodex ? "/v1" : "");
  spec.api.key_env = "KEVO_TEST_MODEL_KEY";
  spec.mcp_command = {(kBin / "kevo").string(), "mcp", (fs::path(KEVO_SOURCE_DIR) / "tasks" / "softmax").string(),
                      "--db", e.db.string(), "--fake-gpu", "--max-evals", "10"};
  spec.workspace = e.workspace;
  spec.control_dir = e.t.path / "control";
  spec.bridge_executable = kBin / "kevo-mcp-bridge";
  spec.prompt = "Optimize the softmax kernel with the kevo tools: read the task, evaluate, submit the best.";
  spec.wall_limit = std::chrono::seconds(240);
  spec.max_usd = 1.0;
  e.result = run_agent_episode(spec);
}

// The CLI's own shell ran confined: its workspace file read, each forbidden file refused.
void expect_probe_refused(const EpisodeRun& e, const std::string& context) {
  std::ifstream probe(e.workspace / "probe.txt");
  std::stringstream got;
  got << probe.rdbuf();
  std::string want = "read " + (e.workspace / "own.txt").string() + "\n";
  for (const fs::path& p : {e.forbidden.db, e.forbidden.cache, e.forbidden.other_run, e.forbidden.held_out})
    want += "refused " + p.string() + "\n";
  EXPECT_EQ(got.str(), want) << context;
}

// What kevo recorded: one run, the good kernel passed, the bad one failed, the submission verified.
void expect_recorded(const EpisodeRun& e) {
  ASSERT_TRUE(e.result) << e.result.error().message;
  const AgentEpisodeResult& r = *e.result;
  const std::string context = "CLI: " + r.describe() + "\nstderr: " + r.stderr_tail + "\nfinal: " + r.final_text +
                              "\nkevo mcp stderr: " + r.mcp_stderr_tail;
  EXPECT_TRUE(r.mcp_connected) << context;
  auto db = store::RunDb::open_read_only(e.db);
  ASSERT_TRUE(db) << db.error().message << "\n" << context;
  auto runs = (*db)->list_runs();
  ASSERT_TRUE(runs);
  ASSERT_EQ(runs->size(), 1u) << context;
  auto cands = (*db)->candidates(runs->front().id);
  ASSERT_TRUE(cands);
  int good = 0, bad = 0;
  for (const auto& c : *cands) {
    if (c.source == kGood && c.outcome == store::CandidateOutcome::kPass) ++good;
    if (c.source == kBad && c.outcome == store::CandidateOutcome::kIncorrect) ++bad;
  }
  EXPECT_GE(good, 1) << context;
  EXPECT_EQ(bad, 1) << context;
  auto run = (*db)->get_run(runs->front().id);
  ASSERT_TRUE(run);
  // The submission, verified on the held-out configs, is the run's winner.
  const results::RunFinal final = results::final_from_text(run->final_json);
  ASSERT_TRUE(final.recorded) << "no submitted result recorded\n" << context;
  ASSERT_NE(final.winner, 0) << run->final_json << "\n" << context;
  EXPECT_EQ(final.winner, run->best_candidate);
  auto winner = (*db)->candidate(final.winner);
  ASSERT_TRUE(winner);
  EXPECT_EQ(winner->source, kGood) << context;
  EXPECT_EQ(winner->outcome, store::CandidateOutcome::kPass);
  for (const auto& c : *cands)
    std::printf("[ episode ] candidate %lld %s: %s %s\n", static_cast<long long>(c.id), c.name.c_str(),
                store::to_string(c.outcome), c.reason.c_str());
  // Every request went to the scripted endpoints, and the script ran to its end.
  for (const auto& p : e.model->problems()) ADD_FAILURE() << "model server: " << p.dump();
  EXPECT_EQ(e.model->turns_reached(), 6u) << context;
  expect_probe_refused(e, context);
}

// What the model server was asked, for reading a failure.
void print_requests(const test::FakeModelServer& model) {
  for (const auto& req : model.requests())
    std::printf("[ episode ] request %s %s -> %s turn %s %s\n", req.value("method", "").c_str(),
                req.value("path", "").c_str(), req["status"].dump().c_str(),
                req.contains("turn") ? req["turn"].dump().c_str() : "-", req.value("note", req.value("problem", "")).c_str());
}

void episode_test(AgentCliKind kind) {
  const Installed& i = installed();
  if (!i.why_not.empty()) GTEST_SKIP() << "npm could not install the agent CLIs: " << i.why_not;
  Network& net = network();
  ASSERT_EQ(net.why_not, "") << "no loopback-only network namespace";
  // The tripwire answers for every address: the namespace has no way out.
  const size_t seen = net.tripwire.attempts().size();
  ASSERT_EQ(outside_answer(), "connected");
  addrinfo* ai = nullptr;
  ASSERT_NE(getaddrinfo("api.anthropic.com", "443", nullptr, &ai), 0) << "a name resolved in the namespace";
  for (int ms = 0; ms < 2000 && net.tripwire.attempts().size() < seen + 2; ms += 10)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // its thread takes the connection
  const auto controls = net.tripwire.attempts();
  ASSERT_GE(controls.size(), seen + 2);
  EXPECT_THAT(controls, ::testing::Contains("TCP connection to port 443"));
  EXPECT_THAT(controls, ::testing::Contains("DNS query for api.anthropic.com"));
  const size_t before = controls.size();
  EpisodeRun e;
  const auto start = std::chrono::steady_clock::now();
  run(e, kind, kind == AgentCliKind::kCodex ? i.codex : i.claude);
  expect_recorded(e);
  if (::testing::Test::HasFailure() && e.model) print_requests(*e.model);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // what the episode's last moments tried
  const auto tried = net.tripwire.attempts();
  for (size_t k = before; k < tried.size(); ++k) ADD_FAILURE() << "the episode reached for the outside: " << tried[k];
  std::printf("[ episode ] %s: %.1f s (install check %.1f s), %zu model requests\n", to_string(kind),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), i.seconds,
              e.model ? e.model->requests().size() : 0);
}

}  // namespace

TEST(AgentCliEpisode, ClaudeCodeEvaluatesAGoodAndABadKernelAndSubmits) { episode_test(AgentCliKind::kClaudeCode); }

TEST(AgentCliEpisode, CodexEvaluatesAGoodAndABadKernelAndSubmits) { episode_test(AgentCliKind::kCodex); }

// Claude Code as the mutator of a search: each proposal is an episode of the real CLI, confined,
// whose evaluations are the search's candidates; the search verifies its winner on held-out shapes.
TEST(AgentCliEpisode, ClaudeCodeIsTheMutatorOfASearch) {
  const Installed& i = installed();
  if (!i.why_not.empty()) GTEST_SKIP() << "npm could not install the agent CLIs: " << i.why_not;
  Network& net = network();
  ASSERT_EQ(net.why_not, "") << "no loopback-only network namespace";
  const size_t before = net.tripwire.attempts().size();
  TempDir t{"kevo-cli-search"};
  auto one = [](json call) { return json{{"tool_calls", json::array({std::move(call)})}}; };
  auto s = test::parse_model_script(json{
      {"server", "kevo"},
      {"turns", json::array({one({{"tool", "task"}, {"arguments", json::object()}}),
                             one({{"tool", "evaluate"}, {"arguments", {{"source", kGood}, {"name", "good"}}}}),
                             one({{"tool", "evaluate"}, {"arguments", {{"source", kBad}, {"name", "bad"}}}}),
                             one({{"tool", "submit"}, {"arguments", {{"source", kGood}}}}),
                             {{"text", "Submitted the good kernel."}}})}});
  ASSERT_TRUE(s) << s.error().message;
  auto model = test::FakeModelServer::start(*s, t.path / "model-requests.jsonl");
  ASSERT_TRUE(model) << model.error().message;
  setenv("KEVO_TEST_MODEL_KEY", "sk-kevo-test-not-a-real-key", 1);
  evolve::testing::Harness h(evolve::testing::improving_kernels());
  CliEpisodeOptions o;
  o.cli = {AgentCliKind::kClaudeCode, "kevo-scripted-model", ""};
  o.cli_executable = i.claude;
  o.api = {(*model)->base_url(), "KEVO_TEST_MODEL_KEY"};
  o.work_root = t.path / "episodes";
  o.wall_limit = std::chrono::seconds(240);
  o.bridge_executable = kBin / "kevo-mcp-bridge";
  CliEpisodes agent(h.task, h.evaluator, o);
  auto opts = h.options("kevo-default", 2);  // the episode's two evaluations spend the budget
  evolve::Engine engine(h.task, h.evaluator, *h.db, nullptr, nullptr, h.cancel);
  engine.set_episodes(&agent);
  auto out = engine.start(opts);
  ASSERT_TRUE(out) << out.error().message;
  auto rows = h.candidates(out->run_id);
  auto run = *h.db->get_run(out->run_id);
  std::string context = "stop: " + run.stop_reason + "; note: " + run.note + "\n";
  const auto all_events = *h.db->events(out->run_id);
  for (const auto& ev : all_events) context += ev.kind + " " + ev.data_json + "\n";
  ASSERT_EQ(rows.size(), 2u) << context;
  EXPECT_EQ(rows[0].source, kGood);
  EXPECT_EQ(rows[0].outcome, store::CandidateOutcome::kPass);
  EXPECT_EQ(rows[1].outcome, store::CandidateOutcome::kIncorrect);
  EXPECT_EQ(rows[0].op, "agent");
  EXPECT_EQ(rows[0].model, "claude-code:kevo-scripted-model");
  EXPECT_EQ(out->winner, rows[0].id) << "verified on held-out shapes at the search's end";
  auto events = *h.db->events(out->run_id);
  bool episode_seen = false;
  for (const auto& ev : events)
    if (ev.kind == "episode") episode_seen = json::parse(ev.data_json).value("ok", false);
  EXPECT_TRUE(episode_seen);
  EXPECT_TRUE(std::filesystem::exists(o.work_root / "episode-1" / "workspace" / "TASK.md"));
  for (const auto& p : (*model)->problems()) ADD_FAILURE() << "model server: " << p.dump();
  const auto tried = net.tripwire.attempts();
  for (size_t k = before; k < tried.size(); ++k) ADD_FAILURE() << "the episode reached for the outside: " << tried[k];
}
