// Several evaluations in flight (evolve/eval_pool.h) and the evaluation queue's workers
// (evolve/worker.h): the same results as the serial loop with one slot, every slot used with
// several, and no candidate lost or judged twice when a worker dies holding a job.
#include <algorithm>
#include <set>
#include <thread>

#include "evolve/eval_pool.h"
#include "evolve/job_payload.h"
#include "evolve/worker.h"
#include "harness.h"
#include "util/fs.h"

using namespace kevo;
using namespace kevo::evolve;
using namespace kevo::evolve::testing;

namespace {

// The marker evaluator, counting how many of its evaluations run at once.
class CountingEvaluator final : public CandidateEvaluator {
 public:
  explicit CountingEvaluator(std::atomic<int>& now, std::atomic<int>& peak) : now_(now), peak_(peak) {}
  Verdict evaluate(const Task& t, const std::filesystem::path& f, const EvalOptions& o) override {
    int n = ++now_;
    for (int p = peak_.load(); n > p && !peak_.compare_exchange_weak(p, n);) {
    }
    Verdict v = inner_.evaluate(t, f, o);
    --now_;
    return v;
  }
  Verdict evaluate_baseline(const Task& t, const EvalOptions& o) override { return inner_.evaluate_baseline(t, o); }
  bool is_fake() const override { return true; }

 private:
  MarkerEvaluator inner_;
  std::atomic<int>& now_;
  std::atomic<int>& peak_;
};

PromptServer::Responder slow_kernels(double wall_s) {
  return [wall_s](const std::string&, int n) {
    return answer("k" + std::to_string(n), "idea " + std::to_string(n),
                  kernel_source(fmt::format("pass time_ms={:.4f} noise=0.01 wall_s={}", 1.8 * std::pow(0.93, n), wall_s)));
  };
}

struct Summary {
  std::string op;
  store::CandidateOutcome outcome;
  std::string source;
  std::vector<int64_t> parents;
  double speedup;
  bool operator==(const Summary&) const = default;
};

std::vector<Summary> summary(const std::vector<store::CandidateRow>& rows) {
  std::vector<Summary> out;
  for (const auto& r : rows) out.push_back({r.op, r.outcome, r.source, r.parents, r.speedup});
  return out;
}

}  // namespace

TEST(EvalPool, OneSlotGivesTheSerialLoopsResults) {
  Harness serial(improving_kernels()), pooled(improving_kernels());
  auto o = serial.options("evoengineer-full", 8);
  auto a = serial.run(o);
  ASSERT_TRUE(a) << a.error().message;
  MarkerEvaluator ev;
  std::vector<std::unique_ptr<CandidateEvaluator>> evs;
  evs.push_back(std::make_unique<MarkerEvaluator>());
  auto pool = make_local_pool(std::move(evs), {""}, pooled.task);
  Engine e(pooled.task, pooled.evaluator, *pooled.db, pooled.client.get(), nullptr, pooled.cancel);
  e.set_pool(pool.get());
  auto b = e.start(o);
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_EQ(summary(serial.candidates(a->run_id)), summary(pooled.candidates(b->run_id)));
  EXPECT_EQ(a->winner != 0, b->winner != 0);
}

TEST(EvalPool, EverySlotIsUsedAndEveryCandidateRecordedOnce) {
  Harness h(slow_kernels(0.4));
  std::atomic<int> now{0}, peak{0};
  std::vector<std::unique_ptr<CandidateEvaluator>> evs;
  for (int i = 0; i < 4; ++i) evs.push_back(std::make_unique<CountingEvaluator>(now, peak));
  auto pool = make_local_pool(std::move(evs), {"0", "1", "2", "3"}, h.task);
  EXPECT_EQ(pool->slots(), 4);
  Engine e(h.task, h.evaluator, *h.db, h.client.get(), nullptr, h.cancel);
  e.set_pool(pool.get());
  auto out = e.start(h.options("evoengineer-full", 16, 8));
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(peak.load(), 4);  // four evaluations ran at once
  auto rows = h.candidates(out->run_id);
  ASSERT_EQ(rows.size(), 16u);
  std::set<int> seqs;
  for (const auto& r : rows) seqs.insert(r.seq);
  EXPECT_EQ(seqs.size(), 16u);
  EXPECT_EQ(*seqs.begin(), 1);
  EXPECT_EQ(*seqs.rbegin(), 16);
}

TEST(EvalPool, GpusSpecsAreParsedAndBadOnesNamed) {
  EXPECT_TRUE(parse_gpus("none")->empty());
  EXPECT_EQ(*parse_gpus("0,2"), (std::vector<std::string>{"0", "2"}));
  EXPECT_EQ(parse_gpus("GPU-5c3e2f1a-aaaa")->size(), 1u);
  for (const char* bad : {"0,x", "0,0", "-1", "0;rm", ","}) {
    auto r = parse_gpus(bad);
    EXPECT_FALSE(r) << bad;
  }
  EXPECT_NE(parse_gpus("0,x").error().message.find("'x'"), std::string::npos);
  EXPECT_FALSE(parse_gpus("all")->empty());  // a list, or one slot on the default device
}

// The queue on a SQLite file: three workers (each its own connection), one of which claims a job
// and dies holding it. The run completes; every candidate has one verdict; the dead worker's job
// was claimed again after its lease expired and finished by another.
TEST(EvalQueue, AWorkerThatDiesHoldingAJobLosesOnlyItsLease) {
  Harness h(slow_kernels(0.2));
  QueuePoolOptions qo;
  qo.slots = 4;
  qo.fake = true;
  auto pool = make_queue_pool(*h.db, h.task, qo);
  ASSERT_TRUE(pool) << pool.error().message;
  llm::CancelToken stop;
  const auto root = h.dir / "workers";
  std::atomic<int64_t> abandoned{0};
  // The worker that dies: it judges the baseline like any worker, then claims the first candidate
  // job and never answers again. The others start only then, so the order is always this one.
  std::thread dying([&] {
    auto db = store::RunDb::open(h.dir / "runs.db");
    ASSERT_TRUE(db);
    MarkerEvaluator ev;
    for (int i = 0; i < 3000 && !abandoned; ++i) {
      auto j = (*db)->claim("dead-worker", 0.5, 3);
      ASSERT_TRUE(j) << j.error().message;
      if (!*j) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      } else if ((**j).payload_json.find("\"kind\":\"baseline\"") != std::string::npos) {
        JobResult r;
        r.verdict = ev.evaluate_baseline(h.task, EvalOptions{});
        ASSERT_TRUE((*db)->complete((**j).id, "dead-worker", r.to_json().dump()));
      } else {
        abandoned = (**j).id;
      }
    }
  });
  std::vector<std::thread> workers;
  std::vector<WorkerStats> stats(3);
  for (int i = 0; i < 3; ++i)
    workers.emplace_back([&, i] {
      while (!abandoned && !stop.cancelled()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      auto db = store::RunDb::open(h.dir / "runs.db");
      ASSERT_TRUE(db);
      MarkerEvaluator ev;
      WorkerOptions w;
      w.name = "w" + std::to_string(i);
      w.lease_s = 0.5;
      w.poll = std::chrono::milliseconds(20);
      w.task_root = root;
      auto r = run_worker(**db, ev, w, stop);
      ASSERT_TRUE(r) << r.error().message;
      stats[i] = *r;
    });
  Engine e(h.task, h.evaluator, *h.db, h.client.get(), nullptr, h.cancel);
  e.set_pool(pool->get());
  auto out = e.start(h.options("evoengineer-full", 12, 6));
  stop.cancel();
  dying.join();
  for (auto& t : workers) t.join();
  ASSERT_TRUE(out) << out.error().message;
  auto rows = h.candidates(out->run_id);
  ASSERT_EQ(rows.size(), 12u);
  for (const auto& r : rows) EXPECT_NE(r.outcome, store::CandidateOutcome::kInfraError) << r.message;
  ASSERT_NE(abandoned.load(), 0);
  auto job = h.db->job(abandoned);
  ASSERT_TRUE(job);
  EXPECT_EQ(job->state, store::JobState::kDone);
  EXPECT_EQ(job->attempts, 2);
  EXPECT_NE(job->worker, "dead-worker");
  int done = 0;
  for (const auto& s : stats) done += s.done;
  auto jobs = h.db->jobs(out->run_id);
  ASSERT_TRUE(jobs);
  EXPECT_EQ(done + 1, static_cast<int>(jobs->size()));  // one verdict per job (the baseline's by the dying one)
  for (const auto& j : *jobs) EXPECT_EQ(j.state, store::JobState::kDone) << j.id;
  std::error_code ec;
  EXPECT_TRUE(std::filesystem::exists(root / "tasks", ec));  // the task travelled as blobs
}

TEST(EvalQueue, AWorkerRefusesAJobForAnotherKindOfEvaluator) {
  Harness h(improving_kernels());
  QueuePoolOptions qo;
  qo.fake = false;  // a GPU run's job
  auto pool = make_queue_pool(*h.db, h.task, qo);
  ASSERT_TRUE(pool);
  ASSERT_TRUE((*pool)->set_run(h.db->create_run({.task = "vec_scale", .task_dir = "x", .strategy = "s"}).value()));
  EvalRequest r;
  r.ticket = 1;
  r.file = h.dir / "c.cu";
  r.source = kernel_source("pass time_ms=1");
  ASSERT_TRUE((*pool)->submit(r));
  llm::CancelToken stop;
  MarkerEvaluator fake;
  WorkerOptions w;
  w.name = "fake-worker";
  w.max_jobs = 1;
  w.task_root = h.dir / "workers";
  ASSERT_TRUE(run_worker(*h.db, fake, w, stop));
  auto d = (*pool)->next(std::chrono::seconds(5));
  ASSERT_TRUE(d);
  ASSERT_TRUE(*d);
  EXPECT_EQ((*d)->verdict.outcome, Outcome::InfraError);
  EXPECT_EQ((*d)->verdict.reason, Reason::kWorkerKind);
  EXPECT_NE((*d)->verdict.message.find("fake-worker"), std::string::npos) << (*d)->verdict.message;
  // The coordinator's side names the worker of any infrastructure error, whatever the worker wrote.
  EXPECT_EQ((*d)->verdict.message.rfind("on worker fake-worker: ", 0), 0u) << (*d)->verdict.message;
}

TEST(JobPayload, ATaskTravelsAsBlobsAndUnsafePathsAreRefused) {
  Harness h(improving_kernels());
  auto m = upload_task(*h.db, h.task);
  ASSERT_TRUE(m) << m.error().message;
  auto t = download_task(*h.db, *m, h.dir / "copy");
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->name, h.task.name);
  EXPECT_EQ(read_file(t->baseline_path()).value(), read_file(h.task.baseline_path()).value());
  auto evil = *m;
  evil["files"][0]["path"] = "../../etc/passwd";
  auto bad = download_task(*h.db, evil, h.dir / "copy2");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("unsafe"), std::string::npos);
  auto missing = *m;
  missing["files"][0]["sha256"] = std::string(64, 'a');
  bad = download_task(*h.db, missing, h.dir / "copy3");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("not in the run database"), std::string::npos) << bad.error().message;
  EvalOptions o;
  o.seed = 42;
  o.held_out_only = true;
  o.profile = true;  // a worker profiles what the coordinator asked it to
  o.profile_timeout = std::chrono::seconds(12);
  o.timing_stop_below = 1.25;  // a worker races as the coordinator's search asked
  o.baseline_ms = 3.5;        // and credits against the run's baseline figure on that GPU
  o.baseline_gpu = "NVIDIA H200";
  auto back = eval_options_from(eval_options_json(o));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->seed, std::optional<uint64_t>(42));
  EXPECT_TRUE(back->held_out_only);
  EXPECT_TRUE(back->profile);
  EXPECT_EQ(back->profile_timeout.count(), 12);
  EXPECT_EQ(back->timing_stop_below, 1.25);
  EXPECT_EQ(back->baseline_ms, 3.5);
  EXPECT_EQ(back->baseline_gpu, "NVIDIA H200");
  EXPECT_FALSE(eval_options_from(eval_options_json(EvalOptions{}))->profile);
  auto j = eval_options_json(o);
  j["profile_timeout_s"] = 0;
  auto bad_timeout = eval_options_from(j);
  ASSERT_FALSE(bad_timeout);
  EXPECT_NE(bad_timeout.error().message.find("profile_timeout_s"), std::string::npos);
  j = eval_options_json(o);
  j["timing_stop_below"] = -1;
  auto bad_race = eval_options_from(j);
  ASSERT_FALSE(bad_race);
  EXPECT_NE(bad_race.error().message.find("timing_stop_below"), std::string::npos);
}

// A coordinator killed with jobs in the queue, then resumed: the old jobs are closed (no worker
// spends a GPU on results nobody reads), and the new jobs are numbered after them.
TEST(EvalQueue, AResumedCoordinatorClosesWhatTheLastOneLeftQueued) {
  Harness h(improving_kernels());
  auto run = h.db->create_run({.task = "vec_scale", .task_dir = "x", .strategy = "s"});
  ASSERT_TRUE(run);
  QueuePoolOptions qo;
  qo.fake = true;
  EvalRequest r;
  r.file = h.dir / "c.cu";
  r.source = kernel_source("pass time_ms=1");
  {
    auto first = make_queue_pool(*h.db, h.task, qo);
    ASSERT_TRUE(first && (*first)->set_run(*run));
    for (int t = 1; t <= 2; ++t) {
      r.ticket = t;
      ASSERT_TRUE((*first)->submit(r));
    }
  }
  auto second = make_queue_pool(*h.db, h.task, qo);
  ASSERT_TRUE(second && (*second)->set_run(*run));
  auto jobs = h.db->jobs(*run);
  ASSERT_TRUE(jobs && jobs->size() == 2u);
  for (const auto& j : *jobs) {
    EXPECT_EQ(j.state, store::JobState::kDone);
    EXPECT_NE(j.result_json.find("superseded"), std::string::npos) << j.result_json;
  }
  r.ticket = 1;
  ASSERT_TRUE((*second)->submit(r));
  jobs = h.db->jobs(*run, 0, store::JobState::kQueued);
  ASSERT_TRUE(jobs && jobs->size() == 1u);
  EXPECT_EQ(jobs->front().seq, 3);
}

// Progress a person can read: the status line names the step, the search has an ETA.
TEST(Progress, TheStatusLineNamesTheStepAndTheSearchItsEta) {
  Progress p;
  p.run_id = 3;
  p.phase = Progress::Phase::kBaseline;
  p.detail = "checking it against its reference and timing it";
  p.elapsed_s = 12;
  EXPECT_EQ(p.status_line(), "run 3  baseline: checking it against its reference and timing it  0m12s");
  p.phase = Progress::Phase::kSearch;
  p.done = 5, p.budget = 20, p.eta_s = 65;
  EXPECT_NE(p.status_line().find("5/20 done"), std::string::npos) << p.status_line();
  EXPECT_NE(p.status_line().find("ETA 1m05s"), std::string::npos) << p.status_line();
  p.phase = Progress::Phase::kHeldOut;
  p.detail = "candidate #12 (1.500x), 1 of up to 3";
  EXPECT_NE(p.status_line().find("held-out re-verification: candidate #12"), std::string::npos);
  Harness h(improving_kernels());
  std::vector<Progress> seen;
  h.progress = [&](const Progress& q) { seen.push_back(q); };
  auto out = h.run(h.options("evoengineer-full", 4));
  ASSERT_TRUE(out) << out.error().message;
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.front().phase, Progress::Phase::kBaseline);
  EXPECT_TRUE(std::any_of(seen.begin(), seen.end(), [](const Progress& q) {
    return q.phase == Progress::Phase::kSearch && q.done > 0 && q.eta_s >= 0;
  }));
  EXPECT_TRUE(std::any_of(seen.begin(), seen.end(), [](const Progress& q) { return q.phase == Progress::Phase::kHeldOut; }));
}

// Ctrl-C while evaluations wait in the queue and no worker runs: the run stops at once (it does
// not wait for results nobody will produce), records the LLM calls it paid for, and closes the jobs
// so no worker spends a GPU on them later.
TEST(EvalQueue, CtrlCLeavesQueuedEvaluationsAndClosesThem) {
  Harness h(improving_kernels());
  QueuePoolOptions qo;
  qo.fake = true;
  qo.slots = 4;
  auto pool = make_queue_pool(*h.db, h.task, qo);
  ASSERT_TRUE(pool);
  // Only the baseline is answered (by hand, as a worker would); candidates wait forever.
  std::atomic<bool> done{false};
  std::thread baseline_worker([&] {
    auto db = store::RunDb::open(h.dir / "runs.db");
    ASSERT_TRUE(db);
    while (!done) {
      auto j = (*db)->claim("w", 30, 3);
      if (j && *j && (**j).payload_json.find("\"kind\":\"baseline\"") != std::string::npos) {
        JobResult r;
        r.verdict = MarkerEvaluator().evaluate_baseline(h.task, EvalOptions{});
        ASSERT_TRUE((*db)->complete((**j).id, "w", r.to_json().dump()));
      } else if (j && *j) {
        ASSERT_TRUE((*db)->release((**j).id, "w"));
        h.cancel.cancel();  // a candidate is queued: the user presses Ctrl-C
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  Engine e(h.task, h.evaluator, *h.db, h.client.get(), nullptr, h.cancel);
  e.set_pool(pool->get());
  auto out = e.start(h.options("evoengineer-full", 8, 4));
  done = true;
  baseline_worker.join();
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(out->status, store::RunStatus::kInterrupted);
  auto calls = h.db->totals(out->run_id);
  ASSERT_TRUE(calls);
  EXPECT_GE(calls->llm_calls, 1);  // paid for, so recorded
  pool->reset();                   // what `kevo evolve` does on its way out
  auto jobs = h.db->jobs(out->run_id);
  ASSERT_TRUE(jobs);
  for (const auto& j : *jobs) EXPECT_EQ(j.state, store::JobState::kDone) << j.id << " " << j.result_json;
}

// Ctrl-C while the baseline's job waits for a worker that never comes: the run ends interrupted.
TEST(EvalQueue, CtrlCWhileTheBaselineWaitsForAWorker) {
  Harness h(improving_kernels());
  QueuePoolOptions qo;
  qo.fake = true;
  auto pool = make_queue_pool(*h.db, h.task, qo);
  ASSERT_TRUE(pool);
  std::thread user([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    h.cancel.cancel();
  });
  Engine e(h.task, h.evaluator, *h.db, h.client.get(), nullptr, h.cancel);
  e.set_pool(pool->get());
  auto out = e.start(h.options("evoengineer-full", 4));
  user.join();
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(out->status, store::RunStatus::kInterrupted);
  EXPECT_EQ(out->candidates, 0);
}
