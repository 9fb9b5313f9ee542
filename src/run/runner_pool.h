// The runner pool, client side: a per-user process (`kevo runners serve`, run/pool_server.h) that
// keeps kevo-runners started ahead, CUDA context made and hello answered, and hands each to one
// evaluation of another process over a Unix socket (the runner's pipes and arena as fds). A
// runner's start (~0.2-0.5 s, almost all of it the CUDA context) is then off the path of a
// `kevo eval`, which starts two of them (the candidate's and the trusted one).
//
// What it does not change: every runner the pool hands out is fresh (it never loaded anything) and
// is handed out once; the candidate's code still never shares a process with the oracle, the
// baseline or the clock. The pool is the runner's parent, so it reports the runner's exit status
// (a crash's signal) on the connection and kills it when asked, or when the connection closes (the
// evaluating process ended). The pool loads no candidate code and holds no credentials.
#pragma once

#include <filesystem>
#include <optional>

#include "run/runner_client.h"

namespace kevo {

inline constexpr int kPoolProtocol = 1;  // both ends check it: an older pool is not used

// KEVO_RUNNER_POOL: "off" (never), "use" (take from a running pool, start none), or "auto" (the
// default: `kevo eval` also starts one for the evaluations after it).
enum class PoolMode { kOff, kUse, kAuto };
PoolMode pool_mode();

// Where the pool listens: $KEVO_RUNNER_POOL_DIR, else $XDG_RUNTIME_DIR/kevo, else
// /tmp/kevo-runners-<uid>. Made 0700 if missing and `create` (else kNotFound); refused if it is a
// link, another user's or open to others (someone else's socket there could hand out runners of
// their making).
Result<std::filesystem::path> pool_dir(bool create);
std::filesystem::path pool_socket(const std::filesystem::path& dir);

// The environment a runner of these options gets, and the key the pool keeps its runners under:
// the runner binary (path, size, mtime), the working folder and that environment, less the
// variables a shell or a test harness changes between commands ("_", PWD, OLDPWD, SHLVL, GTEST_*),
// which no runner reads: a runner of the kind has the first asker's values of those.
struct PoolKind {
  std::filesystem::path runner;
  std::filesystem::path cwd;
  std::vector<std::string> env;
  std::string key() const;
  json to_json() const;
  static Result<PoolKind> from_json(const json& j);
};
Result<PoolKind> pool_kind_of(const RunnerOptions& o);

// A runner the pool started for exactly these options, alive and answering a hello now, or
// nullopt (no pool, none ready, pooling off, launcher set); asking also has the pool keep such
// runners ready from now on. Never an error: without it, the caller starts its own.
std::optional<std::pair<std::unique_ptr<RunnerClient>, proto::HelloReply>> take_pooled(
    const RunnerOptions& o);

struct PoolStatus {
  long pid = 0;
  int kinds = 0, ready = 0, handed_out = 0;
  long started = 0, taken = 0, failed = 0;
  double idle_exit_s = 0;
  int spares = 0;
};
// The running pool's state; ErrorCode::kNotFound when none answers.
Result<PoolStatus> pool_status();
// Asks the pool to end: it kills its ready runners at once, and exits once the runners it handed
// out have ended (never under an evaluation in flight). kNotFound when none answers.
Status stop_pool();

struct PoolStartOptions {
  std::filesystem::path kevo;  // the kevo executable (empty: this one)
  int spares = 4;              // ready runners kept per kind
  int idle_exit_s = 600;       // ends after this long with no runner taken or out
};
// Starts `kevo runners serve` in a session of its own (its log in the pool folder, pool.log),
// unless one already answers; waits up to 5 s for it to answer. The pid of the pool.
Result<long> start_pool(const PoolStartOptions& o);

}  // namespace kevo
