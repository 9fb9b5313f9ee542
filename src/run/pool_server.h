// The runner pool, server side (`kevo runners serve`): keeps `spares` kevo-runners ready per kind
// of runner asked for (run/runner_pool.h's PoolKind: the GPUs; the binary, folder and environment
// are the pool's own, never a client's), each started under the GPU's shared lock (no context is made while anything is timed there) and hello
// answered, and hands each out once with its pipes and arena as fds. It stays the parent of what it
// handed out: it sends the runner's exit status on the taker's connection, kills it when asked, and
// kills it when that connection closes (the taker ended), again under the shared lock, so its CUDA
// teardown never lands in another evaluation's timing.
#pragma once

#include <chrono>
#include <filesystem>

#include "util/result.h"

namespace kevo {

struct PoolServerOptions {
  std::filesystem::path dir;            // empty: pool_dir()
  std::filesystem::path runner;         // the one kevo-runner it starts; empty: find_runner()
  // Its SHA-256 as the pool's starter expects it (lowercase hex); other bytes are refused at start.
  // Empty: whatever the file holds when the pool starts. Either way those bytes are read once into
  // a sealed memfd and every runner is started from it (run/runner_image.h).
  std::string runner_sha256;
  int spares = 4;                       // ready runners per kind
  int max_kinds = 4;                    // kinds kept (the one asked for least recently goes)
  std::chrono::seconds idle_exit{600};  // ends when nothing was taken or is out for this long
  // Refills start this long after the last take: an evaluation that just took two runners is
  // checking correctness, and a new context beside it slows its IPC opens.
  std::chrono::milliseconds refill_delay{300};
  // ... and, while a runner handed out is still alive, not before this long after the last take:
  // a cold evaluation compiles for ~0.5 s and checks correctness after that, so a refill at 300 ms
  // lands in its correctness check and slows it down. Once every runner
  // out has ended (the evaluation is over) the refill starts at once.
  std::chrono::milliseconds busy_refill_delay{3000};
};

// Serves until stopped, idle or signalled (SIGTERM, SIGINT). An error when another pool holds the
// folder (its pid named) or the socket cannot be made.
Status serve_runner_pool(const PoolServerOptions& o);

}  // namespace kevo
