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

inline constexpr int kPoolProtocol = 2;  // both ends check it: an older pool is not used

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

// A kind of runner the pool keeps. The pool defines everything else itself, never from a client:
// the kevo-runner binary (its own, found when it starts: a take that names another is refused), the
// environment (its own, less credentials), "/" as the working folder. A kind differs only in the
// GPUs its runners see (CUDA_VISIBLE_DEVICES: digits, commas, GPU-/MIG- ids).
struct PoolKind {
  std::optional<std::string> gpus;  // nullopt: CUDA_VISIBLE_DEVICES not set
  std::string key() const;
  json to_json() const;
  static Result<PoolKind> from_json(const json& j);
};
// The kind for these options; kNotFound when a pool's runner would not be the runner they describe
// (an environment beyond CUDA_VISIBLE_DEVICES, an exact environment or a working folder).
Result<PoolKind> pool_kind_of(const RunnerOptions& o);
// The environment of the pool's runners of kind `k`: `base` (the pool's own, less credentials)
// with k's GPUs.
std::vector<std::string> pool_runner_env(const std::vector<std::string>& base, const PoolKind& k);

// A runner the pool started for these options (the same binary and GPUs; the pool's own
// environment), alive and answering a hello now, or nullopt (no pool, none ready, pooling off,
// launcher set, options a pool's runner cannot match); asking also has the pool keep such runners
// ready from now on. Never an error: without it, the caller starts its own.
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
