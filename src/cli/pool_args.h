// `--gpus`, `--evals-per-gpu`, `--queue`, `--queue-slots`: where `kevo evolve` and `kevo bench` evaluate
// (evolve/eval_pool.h), parsed and turned into a pool the same way for both.
#pragma once

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "evolve/eval_pool.h"
#include "store/run_db.h"
#include "task/task.h"
#include "util/gpu_util_sampler.h"

namespace kevo::cli {

struct PoolArgs {
  std::string gpus = "all";
  bool queue = false;
  int queue_slots = 16;
  // Evaluations in flight on each GPU (--evals-per-gpu); 0: two on a real GPU (one's checks and
  // compile beside the other's timing raise the throughput; three lowered it),
  // one with --fake-gpu, whose runs stay the serial loop.
  int evals_per_gpu = 0;
};

void add_pool_options(CLI::App* cmd, PoolArgs& a);

// This host's GPUs (`--gpus`), or, in queue mode (`--queue`, or a PostgreSQL `where`), jobs in the
// run database that `kevo worker` processes take, with this host's GPUs among the workers. Null:
// the engine's own evaluator, one at a time (one GPU on the default device).
Result<std::unique_ptr<evolve::EvalPool>> pool_of(const PoolArgs& a, bool fake_gpu, CLI::App* cmd, store::RunDb& db,
                                                  const Task& task, const std::string& where, const char* prog);

// NVML's utilization of the GPUs this host evaluates on (`--gpus`; none with --fake-gpu or
// `--gpus none`, whose figure is then not known), sampled until the sampler is destroyed. When it
// is not known, `prog` says why once on stderr (not for --fake-gpu, which has no GPU to measure).
std::unique_ptr<GpuUtilSampler> gpu_util_of(const PoolArgs& a, bool fake_gpu, const char* prog);

}  // namespace kevo::cli
