// Where the engine's evaluations run: several at once, results taken as they arrive (asynchronous
// steady state). Two kinds:
//  - LocalPool: one CandidateEvaluator per slot on a thread of its own (`--gpus 0,1`: one slot
//    per GPU, each evaluator's runners on its GPU; the compile cache is shared);
//  - QueuePool (queue_pool.h): evaluations become jobs in the run database, and `kevo worker`
//    processes on any host claim and run them.
// With one slot the engine behaves as the serial loop did: it takes a new proposal only when a
// slot is free and records each result before it plans the next.
// Thread-safety: used from the engine's thread only; implementations synchronise internally.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "evolve/candidate_evaluator.h"
#include "llm/cancel.h"
#include "store/run_db.h"

namespace kevo::evolve {

enum class EvalKind { kCandidate, kBaseline };

struct EvalRequest {
  int64_t ticket = 0;  // the engine's number for it, unique in the run
  EvalKind kind = EvalKind::kCandidate;
  std::filesystem::path file;  // the candidate's source file (kCandidate)
  std::string source;          // its text (a queue job carries it; a worker has no shared disk)
  EvalOptions opts;
};

struct EvalDone {
  int64_t ticket = 0;
  Verdict verdict;
  double busy_s = 0;   // wall time the evaluation held its slot
  std::string where;   // "gpu 1", "worker host-a:1234/0": who evaluated it
};

class EvalPool {
 public:
  virtual ~EvalPool() = default;
  // Evaluations it runs at once (>= 1).
  virtual int slots() const = 0;
  virtual int in_flight() const = 0;
  // Starts an evaluation; an error only when it cannot be started at all (the queue's database
  // is gone). The caller keeps in_flight() < slots().
  virtual Status submit(EvalRequest r) = 0;
  // The next finished evaluation, waiting up to `wait`; nullopt when none finished by then.
  virtual Result<std::optional<EvalDone>> next(std::chrono::milliseconds wait) = 0;
  // Whether evaluations in flight may be left behind when a run stops at once (Ctrl-C): a queue's
  // jobs can (the pool closes them, and no worker spends a GPU on them), a local GPU's cannot
  // (its runners belong to this process; they finish first).
  virtual bool can_leave_pending() const { return false; }
  // The run the evaluations belong to (a queue's jobs are the run's); called before any submit.
  virtual Status set_run(int64_t /*run_id*/) { return {}; }
  // A blocking evaluation outside the pipeline (the baseline at the start, held-out
  // re-verification at the end): submitted and waited for. `cancel` (Ctrl-C) ends the wait with an
  // error where the pool can leave the evaluation behind (can_leave_pending).
  Result<EvalDone> run_one(EvalRequest r, const llm::CancelToken* cancel = nullptr);
};

// One evaluator per slot, slot i on GPU gpus[i] (EvalOptions::gpu; "" = the default device).
std::unique_ptr<EvalPool> make_local_pool(std::vector<std::unique_ptr<CandidateEvaluator>> evaluators,
                                          std::vector<std::string> gpus, const Task& task);
// A pool of one slot around an evaluator the caller owns (tests, `kevo evolve` on one GPU).
std::unique_ptr<EvalPool> make_serial_pool(CandidateEvaluator& evaluator, const Task& task);

struct QueuePoolOptions {
  int slots = 16;        // jobs outstanding at once (enough to keep every worker busy)
  bool fake = false;     // the run uses the fake evaluator: only `kevo worker --fake-gpu` takes its jobs
  std::chrono::milliseconds poll{50};
};
// Evaluations as jobs in the run database's queue, taken by `kevo worker` processes (worker.h).
// The task's files are uploaded once, as blobs. A job the queue gave up on (its lease expired on
// too many workers) comes back as an infra_error verdict naming why. `local` evaluators (one per
// GPU in `gpus`) work the run's queue from threads of this process, like workers of its own.
Result<std::unique_ptr<EvalPool>> make_queue_pool(store::RunDb& db, const Task& task, QueuePoolOptions opts,
                                                  std::vector<std::unique_ptr<CandidateEvaluator>> local = {},
                                                  std::vector<std::string> gpus = {});

// The GPUs `--gpus` names: "all" (every visible GPU: CUDA_VISIBLE_DEVICES if set, else what
// nvidia-smi lists; none found is one slot on the default device), "none" (an empty list: only
// workers evaluate), or a comma list of indices or uuids. An error names the bad entry.
Result<std::vector<std::string>> parse_gpus(const std::string& spec);

}  // namespace kevo::evolve
