// The queue through the kevo binary: a coordinator that evaluates nothing itself (--gpus none),
// three `kevo worker --fake-gpu` processes, one killed with SIGKILL while it holds a job. The run
// completes; every candidate has exactly one verdict; the killed worker's job was done by another.
#include <signal.h>
#include <sys/wait.h>

#include <set>
#include <thread>

#include "check/evaluator.h"
#include "harness.h"
#include "support/pg_server.h"
#include "util/fs.h"
#include "util/subprocess.h"

using namespace kevo;
using namespace kevo::evolve;
using namespace kevo::evolve::testing;
namespace fs = std::filesystem;

namespace {

const fs::path kKevoBin = fs::path(KEVO_BINARY_DIR) / "bin" / "kevo";

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// kevo with its output in a log file (no pipe to fill), in its own process group.
Child start_kevo(const std::vector<std::string>& args, const fs::path& home, const fs::path& log) {
  std::string cmd = "exec " + quote(kKevoBin.string());
  for (const auto& a : args) cmd += " " + quote(a);
  cmd += " >" + quote(log.string()) + " 2>&1";
  auto c = spawn_process({.argv = {"/bin/sh", "-c", cmd},
                          .env_add = {{"HOME", home.string()}, {"KEVO_CACHE_DIR", (home / "cache").string()}},
                          .null_stdio = true,
                          .die_with_parent = true});
  EXPECT_TRUE(c) << (c ? "" : c.error().message);
  return c ? *c : Child{};
}

std::string log_of(const fs::path& p) {
  auto t = read_file(p);
  return t ? *t : "(no log)";
}

int wait_exit(Child& c, std::chrono::seconds limit) {
  auto st = wait_for_exit(c, limit);
  if (!st) {
    kill_and_reap(c);
    return -1;
  }
  return WIFEXITED(*st) ? WEXITSTATUS(*st) : 128 + WTERMSIG(*st);
}

// The coordinator and three workers on `db` (a SQLite path or a PostgreSQL URL).
void kill_one_worker_mid_lease(const std::string& db, Harness& h) {
  const fs::path home = h.dir / "home";
  fs::create_directories(home);
  Child coord = start_kevo({"evolve", h.task.dir.string(), "--db", db, "--fake-gpu", "--gpus", "none", "--queue",
                            "--queue-slots", "4", "--model", h.server.base_url() + "#m1", "--llm", "live",
                            "--budget-candidates", "10", "--parallel", "6", "--strategy", "evoengineer-full", "--quiet"},
                           home, h.dir / "coordinator.log");
  std::vector<Child> workers;
  for (int i = 0; i < 3; ++i)
    workers.push_back(start_kevo({"worker", "--db", db, "--fake-gpu", "--lease", "1"}, home,
                                 h.dir / ("worker" + std::to_string(i) + ".log")));
  // Kill worker 0 once it holds a candidate's job.
  auto reader = store::RunDb::open_read_only(db);
  const std::string victim = ":" + std::to_string(workers[0].pid) + "/";
  int64_t killed_job = 0;
  for (int i = 0; i < 3000 && !killed_job; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (!reader) reader = store::RunDb::open_read_only(db);
    if (!reader) continue;
    auto runs = (*reader)->list_runs();
    if (!runs || runs->empty()) continue;
    auto jobs = (*reader)->jobs(runs->back().id, 0, store::JobState::kClaimed);
    if (!jobs) continue;
    for (const auto& j : *jobs)
      if (j.worker.find(victim) != std::string::npos && j.seq > 1) killed_job = j.id;
  }
  ASSERT_NE(killed_job, 0) << "worker 0 never held a candidate's job";
  ASSERT_EQ(::kill(workers[0].pid, SIGKILL), 0);
  EXPECT_EQ(wait_exit(workers[0], std::chrono::seconds(10)), 128 + SIGKILL);
  int rc = wait_exit(coord, std::chrono::seconds(240));
  EXPECT_TRUE(rc == 0 || rc == 1) << "coordinator exit " << rc << "\n" << log_of(h.dir / "coordinator.log");
  for (size_t i = 1; i < workers.size(); ++i) {
    ::kill(workers[i].pid, SIGTERM);  // stop cleanly: finish, then exit 0
    EXPECT_EQ(wait_exit(workers[i], std::chrono::seconds(30)), 0) << log_of(h.dir / ("worker" + std::to_string(i) + ".log"));
  }
  auto db2 = store::RunDb::open_read_only(db);
  ASSERT_TRUE(db2) << db2.error().message;
  auto runs = (*db2)->list_runs();
  ASSERT_TRUE(runs && runs->size() == 1);
  const auto& run = runs->front();
  EXPECT_EQ(run.status, store::RunStatus::kFinished) << run.stop_reason << " " << run.note;
  auto cands = (*db2)->candidates(run.id);
  ASSERT_TRUE(cands);
  EXPECT_EQ(cands->size(), 10u);
  for (const auto& c : *cands) EXPECT_NE(c.outcome, store::CandidateOutcome::kInfraError) << c.message;
  auto job = (*db2)->job(killed_job);
  ASSERT_TRUE(job);
  EXPECT_EQ(job->state, store::JobState::kDone);
  EXPECT_GE(job->attempts, 2);
  EXPECT_EQ(job->worker.find(victim), std::string::npos) << job->worker;
  auto jobs = (*db2)->jobs(run.id);
  ASSERT_TRUE(jobs);
  for (const auto& j : *jobs) EXPECT_EQ(j.state, store::JobState::kDone) << "job " << j.id;
}

}  // namespace

TEST(WorkerCli, SqliteQueueSurvivesAWorkerKilledMidLease) {
  if (!fs::exists(kKevoBin)) GTEST_SKIP() << "no kevo binary at " << kKevoBin;
  Harness h([](const std::string&, int n) {
    return answer("k" + std::to_string(n), "idea " + std::to_string(n),
                  kernel_source(fmt::format("pass time_ms={:.4f} noise=0.01 wall_s=0.5", 1.8 * std::pow(0.93, n))));
  });
  kill_one_worker_mid_lease((h.dir / "queue.db").string(), h);
}

TEST(WorkerCli, PostgresQueueSurvivesAWorkerKilledMidLease) {
  if (!fs::exists(kKevoBin)) GTEST_SKIP() << "no kevo binary at " << kKevoBin;
  auto url = kevo::test::fresh_pg_database();
  if (!url) GTEST_SKIP() << url.error().message;
  Harness h([](const std::string&, int n) {
    return answer("k" + std::to_string(n), "idea " + std::to_string(n),
                  kernel_source(fmt::format("pass time_ms={:.4f} noise=0.01 wall_s=0.5", 1.8 * std::pow(0.93, n))));
  });
  kill_one_worker_mid_lease(*url, h);
}

// Bad input to `kevo worker` is one clear line and exit 2, before any thread starts.
TEST(WorkerCli, BadArgumentsAreNamed) {
  if (!fs::exists(kKevoBin)) GTEST_SKIP() << "no kevo binary at " << kKevoBin;
  auto home = kevo::test::temp_dir_until_exit("kevo-worker-args");
  auto run = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {kKevoBin.string(), "worker"});
    auto r = run_process({.argv = args, .env_add = {{"HOME", home.string()}, {"KEVO_DB", ""}},
                          .timeout = std::chrono::seconds(60)});
    EXPECT_TRUE(r);
    return r ? *r : RunResult{};
  };
  auto no_db = run({});
  EXPECT_EQ(no_db.exit_code, 2);
  EXPECT_NE(no_db.err.find("--db"), std::string::npos) << no_db.err;
  auto bad_gpu = run({"--db", (home / "q.db").string(), "--gpus", "0,x"});
  EXPECT_EQ(bad_gpu.exit_code, 2);
  EXPECT_NE(bad_gpu.err.find("'x'"), std::string::npos) << bad_gpu.err;
  // kevo evolve's side: a bad --gpus, and --gpus none without a queue that workers could serve.
  Harness h(improving_kernels());
  for (const auto& [gpus, says] : std::vector<std::pair<std::string, std::string>>{{"0,x", "'x'"}, {"none", "--queue"}}) {
    auto r = run_process({.argv = {kKevoBin.string(), "evolve", h.task.dir.string(), "--fake-gpu", "--db",
                                   (home / "e.db").string(), "--gpus", gpus, "--model", h.server.base_url() + "#m1"},
                          .env_add = {{"HOME", home.string()}},
                          .timeout = std::chrono::seconds(60)});
    ASSERT_TRUE(r);
    EXPECT_EQ(r->exit_code, 2) << gpus << ": " << r->err;
    EXPECT_NE(r->err.find(says), std::string::npos) << r->err;
  }
  auto no_server = run({"--db", "postgresql:///kevo?host=/nonexistent-dir&user=nobody", "--fake-gpu"});
  EXPECT_EQ(no_server.exit_code, 2);
  EXPECT_NE(no_server.err.find("kevo worker:"), std::string::npos) << no_server.err;
}

// A worker on a host without a usable GPU says so and exits 3 before it takes any job: a queued job
// stays queued for a worker that can run it.
TEST(WorkerCli, AWorkerWithoutAUsableGpuTakesNoJob) {
  if (!fs::exists(kKevoBin)) GTEST_SKIP() << "no kevo binary at " << kKevoBin;
  if (probe_gpu("")) GTEST_SKIP() << "this host has a usable GPU";
  auto home = kevo::test::temp_dir_until_exit("kevo-worker-nogpu");
  const std::string db_path = (home / "q.db").string();
  int64_t run_id = 0;
  {
    auto db = store::RunDb::open(db_path);
    ASSERT_TRUE(db) << db.error().message;
    store::RunRow row;
    row.task = "gelu";
    auto id = (*db)->create_run(row);
    ASSERT_TRUE(id) << id.error().message;
    run_id = *id;
    ASSERT_TRUE((*db)->enqueue(run_id, 1, "{}"));
  }
  auto r = run_process({.argv = {kKevoBin.string(), "worker", "--db", db_path, "--idle-exit", "1"},
                        .env_add = {{"HOME", home.string()}, {"KEVO_DB", ""}},
                        .timeout = std::chrono::seconds(120)});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->exit_code, 3) << r->err;
  EXPECT_NE(r->err.find("no usable GPU"), std::string::npos) << r->err;
  EXPECT_NE(r->err.find("/gpu"), std::string::npos) << "the worker names itself: " << r->err;
  auto db = store::RunDb::open(db_path);
  ASSERT_TRUE(db);
  auto jobs = (*db)->jobs(run_id);
  ASSERT_TRUE(jobs);
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ(jobs->front().state, store::JobState::kQueued) << "the job was taken";
}
