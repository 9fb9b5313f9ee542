// QueuePool: evaluations as jobs in the run database, for `kevo worker` processes on any host.
#include <deque>
#include <map>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "evolve/eval_pool.h"
#include "evolve/job_payload.h"
#include "evolve/worker.h"

#include <spdlog/spdlog.h>

namespace kevo::evolve {

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

class QueuePool final : public EvalPool {
 public:
  QueuePool(store::RunDb& db, json manifest, QueuePoolOptions o, std::vector<std::unique_ptr<CandidateEvaluator>> local,
            std::vector<std::string> gpus)
      : db_(db), manifest_(std::move(manifest)), o_(o), local_(std::move(local)), gpus_(std::move(gpus)) {
    gpus_.resize(local_.size());
  }
  ~QueuePool() override {
    stop_.cancel();
    for (auto& t : threads_) t.join();
    // Jobs nobody will read (the run stopped with them in flight) are closed, best effort.
    for (const auto& [id, ticket] : jobs_)
      (void)db_.complete(id, "coordinator", R"({"superseded":"the run stopped before its result"})");
  }

  bool can_leave_pending() const override { return true; }

  int slots() const override { return std::max(1, o_.slots); }

  Status set_run(int64_t run_id) override {
    run_id_ = run_id;
    // A resumed run continues the job numbers after its earlier sessions' (enqueue is idempotent
    // on the number, so reusing one would return an old job's result).
    auto all = db_.jobs(run_id);
    if (!all) return all.unexpected();
    seq_base_ = 0;
    for (const auto& j : *all) seq_base_ = std::max(seq_base_, j.seq);
    // Jobs an earlier coordinator of this run left queued or claimed (it was killed) have no one to
    // read their results: they are closed, so no worker spends a GPU on them (a worker holding one
    // finds its result already written and moves on).
    int closed = 0;
    for (const auto& j : *all)
      if (j.state == store::JobState::kQueued || j.state == store::JobState::kClaimed) {
        auto c = db_.complete(j.id, "coordinator", R"({"superseded":"the run was resumed"})");
        if (!c) return c.unexpected();
        closed += *c;
      }
    if (closed) spdlog::info("run {}: closed {} job(s) an earlier session left in the queue", run_id, closed);
    start_local_workers();
    return {};
  }

  Status submit(EvalRequest r) override {
    if (run_id_ == 0) return fail("the evaluation queue has no run yet");
    JobPayload p;
    p.kind = r.kind;
    p.task = manifest_;
    p.opts = r.opts;
    p.fake = o_.fake;
    p.file_name = r.file.empty() ? "baseline.cu" : r.file.filename().string();
    if (r.kind == EvalKind::kCandidate) {
      auto sha = db_.put_blob(r.source);
      if (!sha) return sha.unexpected();
      p.source_sha256 = *sha;
    }
    auto id = db_.enqueue(run_id_, seq_base_ + r.ticket, p.to_json().dump());
    if (!id) return id.unexpected();
    if (jobs_.empty()) last_progress_ = Clock::now();  // the wait for a worker starts now
    jobs_[*id] = r.ticket;
    return {};
  }

  int in_flight() const override { return static_cast<int>(jobs_.size() + ready_.size()); }

  // Results are read from the database at most once per poll interval, all that finished at once;
  // between reads, finished ones are handed out from memory, so a wait of a millisecond or two
  // (the engine checking its proposals between results) costs no query.
  Result<std::optional<EvalDone>> next(std::chrono::milliseconds wait) override {
    const auto until = Clock::now() + wait;
    while (true) {
      if (!ready_.empty()) {
        EvalDone d = std::move(ready_.front());
        ready_.pop_front();
        return std::optional<EvalDone>(std::move(d));
      }
      if (jobs_.empty()) return std::optional<EvalDone>();
      const auto now = Clock::now();
      if (now - last_poll_ >= o_.poll) {
        last_poll_ = now;
        KEVO_TRY(collect_finished());
        if (!ready_.empty()) {
          last_progress_ = now;
          continue;
        }
      }
      if (now >= until) {
        warn_if_stalled();
        return std::optional<EvalDone>();
      }
      std::this_thread::sleep_for(std::min<Clock::duration>({o_.poll - (now - last_poll_), until - now}));
    }
  }

 private:
  // Every one of this pool's jobs that has a result, moved from the pool to ready_ in id order.
  Status collect_finished() {
    auto rows = db_.jobs(run_id_, jobs_.begin()->first - 1);
    if (!rows) return rows.unexpected();
    for (const auto& row : *rows) {
      auto it = jobs_.find(row.id);
      if (it == jobs_.end() || (row.state != store::JobState::kDone && row.state != store::JobState::kFailed)) continue;
      EvalDone d;
      d.ticket = it->second;
      jobs_.erase(it);
      d.where = row.worker;
      if (row.state == store::JobState::kFailed) {
        d.verdict.set(Outcome::InfraError, Reason::kJobLost, fmt::format("job {}: {}", row.id, row.result_json));
      } else if (auto res = JobResult::from_json(json::parse(row.result_json, nullptr, false)); !res) {
        d.verdict.set(Outcome::InfraError, Reason::kJobResult, fmt::format("job {}: {}", row.id, res.error().message));
      } else {
        d.verdict = std::move(res->verdict);
        d.busy_s = res->busy_s;
      }
      // The machine's failure, not the candidate's: say whose, so the coordinator's log names it.
      if (d.verdict.outcome == Outcome::InfraError && !row.worker.empty())
        d.verdict.message = fmt::format("on worker {}: {}", row.worker, d.verdict.message);
      ready_.push_back(std::move(d));
    }
    return {};
  }

  // Jobs waiting a minute with none finished: most likely no worker is running. Said once a minute.
  void warn_if_stalled() {
    const auto now = Clock::now();
    if (now - last_progress_ < std::chrono::seconds(60) || now - last_warning_ < std::chrono::seconds(60)) return;
    last_warning_ = now;
    spdlog::warn("run {}: {} evaluation(s) queued and none finished for {:.0f} s: is a worker running? (kevo worker "
                 "--db {}{})",
                 run_id_, jobs_.size(), std::chrono::duration<double>(now - last_progress_).count(), db_.where(),
                 o_.fake ? " --fake-gpu" : "");
  }

  // This process's own GPUs take the run's jobs like any worker (and outlive no pool).
  void start_local_workers() {
    if (!threads_.empty()) return;
    const std::string host = worker_host_id();
    for (size_t i = 0; i < local_.size(); ++i) {
      WorkerOptions w;
      w.name = fmt::format("{}/{}", host, gpus_[i].empty() ? "gpu" : "gpu" + gpus_[i]);
      w.gpu = gpus_[i];
      w.run_id = run_id_;
      w.poll = o_.poll;
      threads_.emplace_back([this, i, w] {
        auto r = run_worker(db_, *local_[i], w, stop_);
        if (!r) spdlog::error("local worker {} stopped: {}", w.name, r.error().message);
      });
    }
  }

  store::RunDb& db_;
  json manifest_;
  QueuePoolOptions o_;
  std::vector<std::unique_ptr<CandidateEvaluator>> local_;
  std::vector<std::string> gpus_;
  llm::CancelToken stop_;
  std::vector<std::thread> threads_;
  Clock::time_point last_progress_ = Clock::now(), last_warning_{}, last_poll_{};
  std::deque<EvalDone> ready_;  // finished, read from the database, not yet handed out
  int64_t run_id_ = 0, seq_base_ = 0;
  std::map<int64_t, int64_t> jobs_;  // job id -> ticket, for the jobs in flight
};

}  // namespace

Result<std::unique_ptr<EvalPool>> make_queue_pool(store::RunDb& db, const Task& task, QueuePoolOptions opts,
                                                  std::vector<std::unique_ptr<CandidateEvaluator>> local,
                                                  std::vector<std::string> gpus) {
  auto manifest = upload_task(db, task);
  if (!manifest) return manifest.unexpected();
  return std::unique_ptr<EvalPool>(
      std::make_unique<QueuePool>(db, std::move(*manifest), opts, std::move(local), std::move(gpus)));
}

}  // namespace kevo::evolve
