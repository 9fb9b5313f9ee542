#include "evolve/worker.h"

#include <unistd.h>

#include <future>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "evolve/job_payload.h"
#include "util/fs.h"

namespace kevo::evolve {

namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;
using nlohmann::json;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// A job this worker cannot run still gets an answer, so the coordinator hears why.
Verdict refused(Reason reason, const std::string& message) {
  Verdict v;
  v.set(Outcome::InfraError, reason, message);
  return v;
}

// The verdict of one job, evaluated while the lease is renewed.
Verdict evaluate_job(store::RunDb& db, CandidateEvaluator& ev, const WorkerOptions& o, const store::JobRow& job,
                     const fs::path& root, WorkerStats& st) {
  auto p = JobPayload::from_json(json::parse(job.payload_json, nullptr, false));
  if (!p) return refused(Reason::kJobPayload, fmt::format("job {}: {}", job.id, p.error().message));
  if (p->fake != ev.is_fake())
    return refused(Reason::kWorkerKind, fmt::format("job {} is for a {} evaluator, and worker {} has a {} one", job.id,
                                              p->fake ? "fake (marker)" : "GPU", o.name, ev.is_fake() ? "fake" : "GPU"));
  auto task = download_task(db, p->task, root / "tasks");
  if (!task) return refused(Reason::kJobTask, fmt::format("job {}: {}", job.id, task.error().message));
  const fs::path dir = root / "jobs" / fmt::format("{}-{}", job.id, getpid());
  fs::path file;
  if (p->kind == EvalKind::kCandidate) {
    auto src = db.blob(p->source_sha256);
    if (!src || !*src) return refused(Reason::kJobSource, fmt::format("job {}: its source is not in the run database", job.id));
    file = dir / p->file_name;
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (auto w = write_file_atomic(file, **src); !w) return refused(Reason::kWorkerDisk, w.error().message);
  }
  EvalOptions opts = p->opts;
  opts.gpu = o.gpu;
  auto fut = std::async(std::launch::async, [&] {
    return p->kind == EvalKind::kBaseline ? ev.evaluate_baseline(*task, opts) : ev.evaluate(*task, file, opts);
  });
  const auto beat = std::chrono::duration<double>(std::max(0.05, o.lease_s / 3));
  bool lost = false;
  while (fut.wait_for(beat) != std::future_status::ready) {
    const auto t0 = Clock::now();
    auto h = db.heartbeat(job.id, o.name, o.lease_s);
    st.heartbeat_s += since(t0);
    if (h && !*h && !lost) {
      lost = true;
      ++st.lease_lost;
      spdlog::warn("worker {}: lost the lease of job {} (it expired); finishing it anyway", o.name, job.id);
    }
  }
  Verdict v = fut.get();
  std::error_code ec;
  fs::remove_all(dir, ec);
  return v;
}

}  // namespace

std::string worker_host_id() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "unknown-host");
  return fmt::format("{}:{}", host, getpid());
}

namespace {

// Retries `op` while the database fails, with backoff, up to the outage limit (or a stop when
// nothing is in hand). Each outage is logged once, and its end.
template <class Op>
auto with_retries(const WorkerOptions& o, const llm::CancelToken& stop, bool holding, const char* what, Op op)
    -> decltype(op()) {
  const auto t0 = Clock::now();
  double backoff = 0.5;
  for (bool logged = false;; backoff = std::min(backoff * 2, 15.0)) {
    auto r = op();
    if (r || since(t0) >= o.max_outage_s || (stop.cancelled() && !holding)) {
      if (r && logged) spdlog::info("worker {}: the run database answers again", o.name);
      return r;
    }
    if (!logged) spdlog::warn("worker {}: cannot {} ({}); retrying for up to {:.0f} s", o.name, what,
                              r.error().message, o.max_outage_s);
    logged = true;
    std::this_thread::sleep_for(std::chrono::duration<double>(backoff));
  }
}

}  // namespace

Result<WorkerStats> run_worker(store::RunDb& db, CandidateEvaluator& ev, const WorkerOptions& o,
                               const llm::CancelToken& stop) {
  WorkerStats st;
  const fs::path root = o.task_root.empty() ? cache_dir() / "worker" : o.task_root;
  auto idle_since = Clock::now();
  while (!stop.cancelled()) {
    if (o.max_jobs && st.done + st.superseded >= *o.max_jobs) break;
    const auto t_claim = Clock::now();
    auto job = with_retries(o, stop, false, "claim a job",
                            [&] { return db.claim(o.name, o.lease_s, o.max_attempts, o.run_id); });
    if (!job) return job.unexpected();
    if (*job) st.claim_s += since(t_claim);
    if (!*job) {
      if (o.idle_exit_s && since(idle_since) >= *o.idle_exit_s) break;
      std::this_thread::sleep_for(o.poll);
      continue;
    }
    const auto t0 = Clock::now();
    JobResult r;
    r.verdict = evaluate_job(db, ev, o, **job, root, st);
    r.busy_s = since(t0);
    r.worker = o.name;
    const std::string result = r.to_json().dump();
    const auto t_done = Clock::now();
    auto first = with_retries(o, stop, true, "write a verdict",
                              [&] { return db.complete((*job)->id, o.name, result); });
    if (!first) return first.unexpected();
    st.complete_s += since(t_done);
    ++(*first ? st.done : st.superseded);
    idle_since = Clock::now();
  }
  return st;
}

}  // namespace kevo::evolve
