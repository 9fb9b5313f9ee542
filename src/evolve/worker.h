// A worker: claims evaluation jobs from the run database's queue, evaluates them on its GPU (or
// with the fake evaluator), and writes each verdict once. `kevo worker` runs one per GPU; a
// coordinator in queue mode runs the same loop on threads for its own GPUs.
//
// Leases: a claimed job is this worker's until now + lease_s; a thread renews it every lease_s / 3
// while the evaluation runs. A worker killed with SIGKILL stops renewing, its lease expires, and
// another worker claims the job again (attempts + 1); a job whose lease expired max_attempts times
// is given up (the coordinator sees an infra_error naming it). A result is written once: a worker
// that finishes a job someone else already finished changes nothing.
// Stopping (the token, e.g. SIGTERM): the evaluation in progress finishes and its verdict is
// written, then the loop returns; nothing claimed is left behind.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

#include "evolve/candidate_evaluator.h"
#include "llm/cancel.h"
#include "store/run_db.h"

namespace kevo::evolve {

struct WorkerOptions {
  std::string name;                 // in the queue's worker column: "host:pid/gpu0"
  std::string gpu;                  // EvalOptions::gpu for its evaluations ("" = the default device)
  double lease_s = 30;
  int max_attempts = 3;
  int64_t run_id = 0;               // only this run's jobs (0: any run)
  std::chrono::milliseconds poll{50};  // between claims while the queue is empty
  std::optional<double> idle_exit_s;  // return after this long without a job (a Slurm array drains)
  std::optional<int> max_jobs;
  std::filesystem::path task_root;  // where jobs' tasks are rebuilt; empty: <cache>/worker
  // A database that stops answering (a server restart, a lost connection) is retried with backoff
  // for this long before the worker gives up; a verdict in hand is kept and written when it is back.
  double max_outage_s = 300;
};

struct WorkerStats {
  int done = 0;         // verdicts written
  int superseded = 0;   // finished after another worker had written the job's result
  int lease_lost = 0;   // the lease expired while evaluating (the result was still offered)
  // The queue's cost per job, in seconds summed over jobs: the claim that returned it, its
  // heartbeats, writing its result (what kevo-bench-queue reports per job).
  double claim_s = 0, heartbeat_s = 0, complete_s = 0;
};

// Runs until `stop`, idle_exit_s or max_jobs. An error: the database did not answer for
// max_outage_s (a job in hand is then left to its lease, and another worker runs it again).
Result<WorkerStats> run_worker(store::RunDb& db, CandidateEvaluator& evaluator, const WorkerOptions& opts,
                               const llm::CancelToken& stop);

// "host:pid" for worker names.
std::string worker_host_id();

}  // namespace kevo::evolve
