#include "cli/pool_args.h"

#include <cstdio>

#include "cli/evaluator_factory.h"
#include "util/nvml.h"

namespace kevo::cli {

void add_pool_options(CLI::App* cmd, PoolArgs& a) {
  cmd->add_option("--gpus", a.gpus, "GPUs that evaluate here: all (default), none, or a list such as 0,2");
  cmd->add_option("--evals-per-gpu", a.evals_per_gpu,
                  "Evaluations in flight on each GPU (default 2; 1 with --fake-gpu): their correctness checks share it, their timing "
                  "takes it alone (the GPU lock), so one candidate's compile and checks overlap another's timing")
      ->check(CLI::Range(1, 8));
  cmd->add_flag("--queue", a.queue,
                "Evaluations as jobs in the run database for `kevo worker` processes (implied by a postgresql:// --db)");
  cmd->add_option("--queue-slots", a.queue_slots, "Queue mode: evaluations in flight (default 16)")
      ->check(CLI::Range(1, 4096));
}

Result<std::unique_ptr<evolve::EvalPool>> pool_of(const PoolArgs& a, bool fake_gpu, CLI::App* cmd, store::RunDb& db,
                                                  const Task& task, const std::string& where, const char* prog) {
  auto gpus = evolve::parse_gpus(a.gpus);
  if (!gpus) return gpus.unexpected();
  const bool queue = a.queue || store::is_postgres_url(where);
  if (!queue && gpus->empty())
    return fail("--gpus none evaluates nothing here: it needs workers (add --queue, or a postgresql:// --db, and "
                "start `kevo worker`)");
  if (!queue && cmd->count("--queue-slots")) return fail("--queue-slots needs --queue (or a postgresql:// --db)");
  const int per_gpu = a.evals_per_gpu > 0 ? a.evals_per_gpu : fake_gpu ? 1 : 2;
  if (!queue && gpus->size() == 1 && gpus->front().empty() && per_gpu == 1) return std::unique_ptr<evolve::EvalPool>();
  // A slot per evaluation in flight: slot i on GPU gpus[i], so a GPU listed n times has n slots.
  std::vector<std::string> slots;
  for (const auto& g : *gpus)
    for (int i = 0; i < per_gpu; ++i) slots.push_back(g);
  *gpus = std::move(slots);
  std::vector<std::unique_ptr<evolve::CandidateEvaluator>> evs;
  for (size_t i = 0; i < gpus->size(); ++i)
    evs.push_back(make_evaluator(fake_gpu));
  if (!queue) return evolve::make_local_pool(std::move(evs), std::move(*gpus), task);
  evolve::QueuePoolOptions qo;
  qo.slots = a.queue_slots;
  qo.fake = fake_gpu;
  std::fprintf(stderr, "%s: evaluations go through the run database's queue (%d in flight); this host works on them "
                       "with %zu GPU(s); add workers with: kevo worker --db %s\n",
               prog, qo.slots, gpus->size(), db.where().c_str());
  return evolve::make_queue_pool(db, task, qo, std::move(evs), std::move(*gpus));
}

std::unique_ptr<GpuUtilSampler> gpu_util_of(const PoolArgs& a, bool fake_gpu, const char* prog) {
  if (fake_gpu) return std::make_unique<GpuUtilSampler>(GpuUtilStatus{GpuUtilCode::kNoGpus, "a fake evaluator"});
  auto gpus = evolve::parse_gpus(a.gpus);
  auto s = nvml_sampler(gpus ? *gpus : std::vector<std::string>{});
  if (!s->available())
    std::fprintf(stderr, "%s: GPU utilization (NVML) is not known, shown as n/a: %s\n", prog,
                 s->status().message.c_str());
  return s;
}

}  // namespace kevo::cli
