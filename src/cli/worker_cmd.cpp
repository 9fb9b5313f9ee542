// `kevo worker`: takes evaluation jobs from a run database's queue (evolve/worker.h), one thread
// per GPU, each with its own connection to the database. SIGTERM or Ctrl-C: every thread finishes
// the evaluation it holds, writes its verdict, and the process exits 0.
#include <csignal>
#include <cstdio>
#include <thread>

#include <fmt/format.h>

#include "check/evaluator.h"
#include "cli/commands.h"
#include "cli/evaluator_factory.h"
#include "cli/signal_guard.h"
#include "evolve/eval_pool.h"
#include "evolve/worker.h"
#include "store/run_db.h"

namespace kevo::cli {

namespace {

llm::CancelToken g_worker_stop;

extern "C" void on_worker_signal(int) { g_worker_stop.cancel(); }

struct WorkerArgs {
  std::string db, gpus = "all";
  bool fake_gpu = false;
  double lease_s = 30, idle_exit_s = 0;
  int64_t run = 0;
  int max_jobs = 0, max_attempts = 3;
};

int worker_fail(const std::string& msg, int code = 2) {
  std::fprintf(stderr, "kevo worker: %s\n", msg.c_str());
  return code;
}

// One GPU's loop on its own connection; returns its stats or the error that stopped it.
Result<evolve::WorkerStats> work_gpu(const WorkerArgs& a, const std::string& gpu, const std::string& name) {
  auto db = store::RunDb::open(a.db);
  if (!db) return db.unexpected();
  std::unique_ptr<evolve::CandidateEvaluator> ev = make_evaluator(a.fake_gpu);
  evolve::WorkerOptions o;
  o.name = name;
  o.gpu = gpu;
  o.lease_s = a.lease_s;
  o.max_attempts = a.max_attempts;
  o.run_id = a.run;
  if (a.idle_exit_s > 0) o.idle_exit_s = a.idle_exit_s;
  if (a.max_jobs > 0) o.max_jobs = a.max_jobs;
  return evolve::run_worker(**db, *ev, o, g_worker_stop);
}

int run_worker_cmd(const WorkerArgs& a) {
  if (a.db.empty()) return worker_fail("--db is required: the run database (a postgresql:// URL, or a SQLite file on this host)");
  auto gpus = evolve::parse_gpus(a.gpus);
  if (!gpus) return worker_fail(gpus.error().message);
  if (gpus->empty()) return worker_fail("--gpus none: a worker with no GPU has nothing to do");
  std::string where;  // the database as messages show it (a URL without its password)
  {  // Fail fast on a bad --db before starting threads.
    auto db = store::RunDb::open(a.db);
    if (!db) return worker_fail(db.error().message);
    where = (*db)->where();
  }
  // A worker without a usable GPU would take jobs only to fail each one: it does not start.
  const std::string host = evolve::worker_host_id();
  for (const std::string& gpu : *gpus) {
    if (a.fake_gpu) break;
    if (auto h = probe_gpu(gpu); !h)
      return worker_fail(fmt::format("{}/{}: no usable GPU ({}); it would fail every job it took (--fake-gpu: a test "
                                     "worker with the marker evaluator)",
                                     host, gpu.empty() ? "gpu" : "gpu" + gpu, h.error().message),
                         3);
  }
  std::vector<Result<evolve::WorkerStats>> results(gpus->size(), fail("not run"));
  {
    SignalGuard sigterm(SIGTERM, on_worker_signal), sigint(SIGINT, on_worker_signal);
    std::vector<std::thread> threads;
    for (size_t i = 0; i < gpus->size(); ++i) {
      const std::string gpu = (*gpus)[i];
      const std::string name = host + "/" + (gpu.empty() ? "gpu" : "gpu" + gpu);
      std::fprintf(stderr, "kevo worker: %s takes jobs from %s%s\n", name.c_str(), where.c_str(),
                   a.fake_gpu ? " (fake evaluator: '// fake:' markers, no GPU)" : "");
      threads.emplace_back([&, i, gpu, name] { results[i] = work_gpu(a, gpu, name); });
    }
    for (auto& t : threads) t.join();
  }
  int rc = 0, done = 0, superseded = 0, lost = 0;
  for (const auto& r : results) {
    if (!r) {
      std::fprintf(stderr, "kevo worker: stopped: %s\n", r.error().message.c_str());
      rc = 3;
      continue;
    }
    done += r->done, superseded += r->superseded, lost += r->lease_lost;
  }
  std::printf("kevo worker: %d verdict(s) written, %d finished after another worker had, %d lease(s) lost%s\n", done,
              superseded, lost, g_worker_stop.cancelled() ? " (stopped by a signal)" : "");
  return rc;
}

}  // namespace

void register_worker(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "worker",
      "Evaluate jobs from a run database's queue on this host's GPUs.\n"
      "Exit codes: 0 stopped (a signal, --idle-exit, --max-jobs), 2 bad arguments or a database that does not "
      "open,\n3 no usable GPU (checked before any job is taken) or the database lost for good.");
  auto a = std::make_shared<WorkerArgs>();
  cmd->add_option("--db", a->db, "Run database: postgresql://... URL (many hosts) or a SQLite file (this host)")
      ->envname("KEVO_DB");
  cmd->add_option("--gpus", a->gpus, "GPUs to use: all (default) or a list such as 0,2");
  cmd->add_option("--run", a->run, "Only this run's jobs (default: any run)");
  cmd->add_option("--lease", a->lease_s, "Seconds a claimed job stays this worker's without a heartbeat (default 30)")
      ->check(CLI::Range(0.1, 3600.0));
  cmd->add_option("--max-attempts", a->max_attempts, "Claims of a job before it is given up (default 3)")
      ->check(CLI::Range(1, 100));
  cmd->add_option("--idle-exit", a->idle_exit_s, "Exit after this many seconds without a job (default: never)");
  cmd->add_option("--max-jobs", a->max_jobs, "Exit after this many jobs per GPU");
  cmd->add_flag("--fake-gpu", a->fake_gpu, "Test only: verdicts from '// fake:' markers, no GPU")->group("");
  cmd->callback([a, &exit_code] { exit_code = run_worker_cmd(*a); });
}

}  // namespace kevo::cli
