// Runners started ahead: a kevo-runner's process start and CUDA context cost ~0.2-0.3 s, which an
// evaluation waits for unless a runner is ready. A long-lived thread keeps a few started (hello
// answered) per kind of runner asked for; an evaluation takes a ready one, or starts its own as
// before. A runner that loads a candidate is fresh and used by one evaluation only: a candidate
// still never shares a process with another candidate, with the oracle or with the baseline
// (docs/ARCHITECTURE.md); only the start moves off the evaluation's path. A trusted runner, which
// never loads candidate code, may serve the next evaluation of its task (keep, take_kept).
// Thread-safety: all functions may be called from any thread.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "run/runner_client.h"

namespace kevo {

class WarmRunners {
 public:
  using Ready = std::pair<std::unique_ptr<RunnerClient>, proto::HelloReply>;  // the runner and its hello

  // How many runners of each kind asked for to keep ready (0: none, the default; kevo evolve and
  // kevo worker set it). Lowering it ends the spares over the new count.
  static void set_spares(int per_kind);
  // A ready runner for `opts` (it answered a hello just now), or nullopt (none ready, or spares
  // are off): the caller starts its own. Either way the kind is kept warm from now on. Runners
  // under a launcher (ncu, compute-sanitizer) are never kept.
  static std::optional<Ready> take(const RunnerOptions& opts);
  // Runners started ahead so far, and taken ready (for tests and the evaluation's breakdown).
  static int started();
  static int taken();

  // A trusted runner (one that never loaded a candidate: the baseline's and the oracle's) kept after
  // an evaluation for the next one with the same `tag` (the task), so an evaluation starts one
  // process, the candidate's, instead of two. The caller frees its buffers first. At most
  // kKeptPerTag per tag and kKeptInAll in all (the oldest go); only while spares are on.
  static constexpr int kKeptPerTag = 2, kKeptInAll = 8;
  static void keep(const RunnerOptions& opts, const std::string& tag, Ready r);
  // A kept runner for `tag`, alive and answering now, or nullopt.
  static std::optional<Ready> take_kept(const RunnerOptions& opts, const std::string& tag);
  static int reused();
};

}  // namespace kevo
