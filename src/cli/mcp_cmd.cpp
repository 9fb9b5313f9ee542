// `kevo mcp TASK`: kevo's checker as a Model Context Protocol server (src/mcp/, src/agent/,
// docs/AGENTS.md). Over stdio by default, as an MCP client starts it; with --http, Streamable HTTP
// (loopback unless a token guards it). Each session is one run in the run database. stdout carries
// protocol messages only: everything for people goes to stderr.
#include <pthread.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <thread>

#include <fmt/format.h>

#include "agent/kernel_tools.h"
#include "cli/commands.h"
#include "cli/db_arg.h"
#include "cli/evaluator_factory.h"
#include "cli/task_arg.h"
#include "evolve/engine.h"
#include "mcp/http.h"
#include "mcp/stdio.h"

namespace kevo::cli {

namespace {

struct McpArgs {
  std::string task, db, http, token;
  bool fake_gpu = false;
  agent::SessionBudgets budgets;
  int seeds = 3;
  double time_budget = evolve::kSearchTimeBudgetS, verify_time_budget = 4.0;
};

int mcp_fail(const std::string& msg, int code = 2) {
  std::fprintf(stderr, "kevo mcp: %s\n", msg.c_str());
  return code;
}

agent::SessionOptions session_options(const McpArgs& a) {
  agent::SessionOptions o;
  o.budgets = a.budgets;
  o.eval.seeds = a.seeds;
  o.eval.time_budget_s = a.time_budget;
  o.verify_time_budget_s = a.verify_time_budget;
  o.launch = "kevo mcp " + a.task + (a.http.empty() ? "" : " --http " + a.http) + (a.fake_gpu ? " --fake-gpu" : "");
  return o;
}

// One session at a time is told to the user; the run ids are in the database.
Result<std::unique_ptr<mcp::ToolProvider>> new_session(const Task& task, evolve::CandidateEvaluator& ev,
                                                       store::RunDb& db, const McpArgs& a) {
  auto s = agent::KernelSession::start(task, ev, db, session_options(a));
  if (!s) return s.unexpected();
  std::fprintf(stderr, "kevo mcp: session started: run %lld in %s\n", static_cast<long long>((*s)->run_id()),
               db.where().c_str());
  return std::unique_ptr<mcp::ToolProvider>(std::make_unique<agent::KernelTools>(std::move(*s)));
}

mcp::ServerInfo server_info() { return {"kevo", KEVO_VERSION, agent::server_instructions()}; }

int serve_http(const McpArgs& a, const Task& task, evolve::CandidateEvaluator& ev, store::RunDb& db) {
  auto listen = serve::parse_listen(a.http);
  if (!listen) return mcp_fail(listen.error().message);
  std::mutex mu;  // sessions start one at a time: each measures the baseline
  mcp::ProviderFactory factory = [&]() -> Result<std::unique_ptr<mcp::ToolProvider>> {
    std::lock_guard lock(mu);
    return new_session(task, ev, db, a);
  };
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);  // taken by this thread alone (sigwait)
  auto server = mcp::HttpServer::open({*listen, a.token}, server_info(), factory);
  if (!server) return mcp_fail(server.error().message, 3);
  std::fprintf(stderr, "kevo mcp: %s (task %s); Ctrl-C stops\n", (*server)->url().c_str(), task.name.c_str());
  std::thread http([&] { (*server)->run(); });
  int sig = 0;
  sigwait(&stop, &sig);
  (*server)->stop();
  http.join();
  return 0;
}

// SIGINT or SIGTERM (an MCP client that closed stdin sends SIGTERM two seconds later) ends the
// session at once: what is recorded stays, a call still running is recorded as abandoned.
[[noreturn]] void stop_on_signal(sigset_t signals, agent::KernelTools* tools, mcp::Session* session) {
  int sig = 0;
  sigwait(&signals, &sig);
  tools->session().finish(agent::SessionEnd::kShutdown, session->refused(), std::chrono::milliseconds(1000));
  std::fprintf(stderr, "kevo mcp: stopped (signal %d); run %lld is recorded\n", sig,
               static_cast<long long>(tools->session().run_id()));
  std::fflush(stderr);
  std::_Exit(0);
}

int serve_stdin(const McpArgs& a, const Task& task, evolve::CandidateEvaluator& ev, store::RunDb& db) {
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);  // before any thread starts: only the watcher takes them
  auto provider = new_session(task, ev, db, a);
  if (!provider) return mcp_fail(provider.error().message, 1);
  auto* tools = static_cast<agent::KernelTools*>(provider->get());
  mcp::Session session(server_info(), std::move(*provider));
  std::thread(stop_on_signal, stop, tools, &session).detach();
  mcp::serve_stdio(session, 0, 1, {}, [&session] { return session.expired(); });
  return 0;
}

int run_mcp(const McpArgs& a) {
  std::signal(SIGPIPE, SIG_IGN);  // a client gone mid-reply is an ended session, not a dead server
  auto task = resolve_task(a.task);
  if (!task) return mcp_fail(task.error().message);
  auto db = store::RunDb::open(db_or_default(a.db));
  if (!db) return mcp_fail(db.error().message);
  auto ev = make_evaluator_said(a.fake_gpu, "kevo mcp");
  return a.http.empty() ? serve_stdin(a, *task, *ev, **db) : serve_http(a, *task, *ev, **db);
}

void add_budget_options(CLI::App* cmd, agent::SessionBudgets& b) {
  cmd->add_option("--max-evals", b.evaluations, "Evaluations (and profiles) per session (default 50)")->check(CLI::PositiveNumber);
  cmd->add_option("--max-gpu-s", b.gpu_seconds, "GPU seconds per session (default 1800)")->check(CLI::PositiveNumber);
  cmd->add_option("--max-wall-s", b.wall_seconds, "Wall-time seconds per session (default 3600)")->check(CLI::PositiveNumber);
  cmd->add_option("--max-parallel", b.parallel, "Evaluations at once per session (default 1)")->check(CLI::Range(1, 64));
  cmd->add_option("--max-submits", b.submissions, "Submissions per session (default 3)")->check(CLI::PositiveNumber);
}

}  // namespace

void register_mcp(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "mcp",
      "Serve kevo's checker to coding agents over the Model Context Protocol (docs/AGENTS.md).\n"
      "Exit codes: 0 the client left or the server was stopped, 1 the session could not start (the baseline\n"
      "failed, the database), 2 bad arguments, 3 the HTTP address could not be bound.");
  auto a = std::make_shared<McpArgs>();
  cmd->add_option("task", a->task, "Task directory, task.toml, or bundled task name")->required();
  cmd->add_option("--db", a->db, "Run database: a SQLite file or a postgresql:// URL (default $KEVO_DB or "
                                 "~/.local/share/kevo/runs.db)");
  cmd->add_option("--http", a->http, "Serve Streamable HTTP on HOST:PORT instead of stdio (port 0: any free port)");
  cmd->add_option("--token", a->token, "Require `Authorization: Bearer TOKEN` (needed beyond loopback)")
      ->envname("KEVO_MCP_TOKEN");
  cmd->add_flag("--fake-gpu", a->fake_gpu, "Verdicts from `// fake:` markers instead of the GPU (tests, dry runs)");
  cmd->add_option("--seeds", a->seeds, "Checker seeds per configuration")->check(CLI::Range(1, 100));
  cmd->add_option("--time-budget", a->time_budget, "Seconds per timing session of an evaluation (default 1)");
  cmd->add_option("--verify-time-budget", a->verify_time_budget, "Seconds per timing session of a submission (default 4)");
  add_budget_options(cmd, a->budgets);
  cmd->callback([a, &exit_code] { exit_code = run_mcp(*a); });
}

}  // namespace kevo::cli
