// `kevo runners`: the per-user runner pool (run/runner_pool.h) that keeps kevo-runners started
// ahead for `kevo eval`, so an evaluation does not wait for two CUDA contexts. `kevo eval` starts
// one by itself after an evaluation that reached a GPU (KEVO_RUNNER_POOL=off: never); these
// commands start, inspect and stop it by hand.
#include <cstdio>

#include "cli/commands.h"
#include "run/pool_server.h"
#include "run/runner_pool.h"
#include "util/log.h"

namespace kevo::cli {
namespace {

struct RunnersArgs {
  int spares = 4;
  int idle_exit_s = 600;
  int refill_delay_ms = 300;
  int busy_refill_delay_ms = 3000;
};

int runners_fail(const std::string& msg, int code = 2) {
  std::fprintf(stderr, "kevo runners: %s\n", msg.c_str());
  return code;
}

int print_status() {
  auto s = pool_status();
  if (!s && s.error().code == ErrorCode::kNotFound) {
    std::printf("no runner pool is running\n");
    return 1;
  }
  if (!s) return runners_fail(s.error().message);
  std::printf(
      "runner pool %ld: %d ready (%d per kind, %d kind(s)), %d out; %ld started, %ld taken, %ld "
      "failed; "
      "ends after %.0f s idle\n",
      s->pid, s->ready, s->spares, s->kinds, s->handed_out, s->started, s->taken, s->failed,
      s->idle_exit_s);
  return 0;
}

// --spares and --idle-exit, the same for `start` and for `serve` (what `start` runs).
void add_pool_options(CLI::App* c, RunnersArgs& a) {
  c->add_option("--spares", a.spares, "Ready runners per kind (binary, folder, environment)")
      ->check(CLI::Range(1, 16));
  c->add_option("--idle-exit", a.idle_exit_s, "End after this many seconds with nothing taken")
      ->check(CLI::Range(1, 7 * 24 * 3600));
}

}  // namespace

void register_runners(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "runners",
      "The runner pool: kevo-runners started ahead (CUDA context made) for `kevo eval`,\n"
      "each handed to one evaluation, fresh. `kevo eval` starts it after an evaluation that\n"
      "reached a GPU (KEVO_RUNNER_POOL=off: never; =use: use one, start none). It ends\n"
      "after --idle-exit seconds with nothing taken.");
  cmd->require_subcommand(1);
  auto a = std::make_shared<RunnersArgs>();
  auto* start = cmd->add_subcommand("start", "Start the pool in the background (no-op if one runs)");
  add_pool_options(start, *a);
  start->callback([a, &exit_code] {
    auto pid = start_pool({{}, a->spares, a->idle_exit_s});
    if (!pid) {
      exit_code = runners_fail(pid.error().message);
      return;
    }
    std::printf("runner pool %ld running\n", *pid);
  });
  cmd->add_subcommand("status", "Say whether a pool runs, and what it holds.\n"
                                "Exit codes: 0 a pool runs, 1 none runs, 2 it could not be asked.")
      ->callback([&exit_code] { exit_code = print_status(); });
  cmd->add_subcommand("stop", "Stop the pool (after the runners it handed out have ended)")
      ->callback([&exit_code] {
        auto s = stop_pool();
        if (!s && s.error().code == ErrorCode::kNotFound) {
          std::printf("no runner pool is running\n");
          return;
        }
        if (!s) exit_code = runners_fail(s.error().message);
      });
  auto* serve = cmd->add_subcommand("serve", "Run the pool in the foreground (what `start` runs)");
  add_pool_options(serve, *a);
  serve->add_option("--refill-delay-ms", a->refill_delay_ms, "Wait this long after a take before refilling")
      ->check(CLI::Range(0, 60000));
  serve->add_option("--busy-refill-delay-ms", a->busy_refill_delay_ms,
                    "While a runner handed out is alive, wait this long after a take before refilling")
      ->check(CLI::Range(0, 600000));
  auto runner = std::make_shared<std::string>();
  serve->add_option("--runner", *runner, "The kevo-runner it starts (default: $KEVO_RUNNER, else beside kevo)");
  auto sha = std::make_shared<std::string>();
  serve->add_option("--runner-sha256", *sha, "Start only if the kevo-runner holds these bytes (its SHA-256, hex)");
  serve->callback([a, runner, sha, &exit_code] {
    PoolServerOptions o;
    o.runner = *runner;
    o.runner_sha256 = *sha;
    o.spares = a->spares;
    o.idle_exit = std::chrono::seconds(a->idle_exit_s);
    o.refill_delay = std::chrono::milliseconds(a->refill_delay_ms);
    o.busy_refill_delay = std::chrono::milliseconds(a->busy_refill_delay_ms);
    if (auto s = serve_runner_pool(o); !s) exit_code = runners_fail(s.error().message);
  });
}

}  // namespace kevo::cli
