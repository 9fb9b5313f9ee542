// GPU end-to-end run of the evolution engine: a scripted model on loopback answers with
// real kernel variants (slow correct, fast correct, fast incorrect, hack) for two bundled tasks.
// The run must end with the fast correct variant as the winner, re-verified on held-out shapes,
// and the incorrect and hack variants rejected with their reasons. Skips without a GPU.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <execinfo.h>

#include <csignal>

#include <atomic>
#include <cstdlib>
#include <thread>

#include <sys/wait.h>

#include "evolve/engine.h"
#include "evolve/eval_pool.h"
#include "evolve/task_context.h"
#include "harness.h"  // tests/evolve: PromptServer, answer()
#include "util/fs.h"
#include "util/subprocess.h"

namespace fs = std::filesystem;
using namespace kevo;
using namespace kevo::evolve;
using namespace kevo::evolve::testing;

namespace {

// A crash in this long GPU test prints the raw frames (binary+offset) to stderr; symbolize them
// with `addr2line -Cfe <the unstripped test binary> OFFSET...` on the machine that built it.
void print_frames_and_die(int sig) {
  void* frames[64];
  int n = backtrace(frames, 64);
  backtrace_symbols_fd(frames, n, 2);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}
[[maybe_unused]] const bool kCrashFrames = [] {
  std::signal(SIGSEGV, print_frames_and_die);
  std::signal(SIGABRT, print_frames_and_die);
  return true;
}();

}  // namespace

namespace {

fs::path src_dir() {
  const char* h = getenv("KEVO_HOME");
  return h && *h ? fs::path(h) : fs::path(KEVO_SOURCE_DIR);
}

std::string slurp(const fs::path& p) {
  auto s = read_file(p);
  EXPECT_TRUE(s) << p;
  return s ? *s : "";
}

struct Variants {
  std::string task, slow, fast, incorrect, hack;
  // Through the run database's queue: the coordinator evaluates nothing, a separate `kevo worker`
  // process on this GPU takes every job (the same winner as the serial run).
  bool queue = false;
};

// `kevo worker` on this host's GPU, its output in a log; killed at the end if still running.
struct WorkerProcess {
  Child child;
  fs::path log;
  ~WorkerProcess() {
    if (child.pid > 0) kill_and_reap(child);
  }
};

std::unique_ptr<WorkerProcess> start_worker(const std::string& db, const fs::path& dir) {
  const char* b = getenv("KEVO_BUILD");
  const fs::path kevo = fs::path(b && *b ? b : KEVO_BINARY_DIR) / "bin" / "kevo";
  auto w = std::make_unique<WorkerProcess>();
  w->log = dir / "worker.log";
  auto c = spawn_process({.argv = {"/bin/sh", "-c",
                                   "exec '" + kevo.string() + "' worker --db '" + db +
                                       "' --gpus all --lease 60 > '" + w->log.string() + "' 2>&1"},
                          .null_stdio = true,
                          .die_with_parent = true});
  EXPECT_TRUE(c) << (c ? "" : c.error().message);
  if (c) w->child = *c;
  return w;
}

void run_e2e(const Variants& v) {
  auto gpu = run_process({.argv = {"nvidia-smi", "-L"}, .timeout = std::chrono::seconds(30)});
  if (!gpu || !gpu->ok()) GTEST_SKIP() << "GPU test skipped: no GPU (nvidia-smi found none)";
  fs::path root = src_dir();
  // The checker finds kevo-runner beside the running executable or on PATH; a test binary lives
  // elsewhere (tests/gpu/), so point at the build's runner unless told otherwise.
  if (const char* b = getenv("KEVO_BUILD"); b && *b && !getenv("KEVO_RUNNER"))
    setenv("KEVO_RUNNER", (fs::path(b) / "bin" / "kevo-runner").c_str(), 1);
  else if (!getenv("KEVO_RUNNER"))
    setenv("KEVO_RUNNER", (fs::path(KEVO_BINARY_DIR) / "bin" / "kevo-runner").c_str(), 1);
  auto task = load_task(root / "tasks" / v.task);
  ASSERT_TRUE(task) << task.error().message;
  std::string slow = slurp(root / v.slow), fast = slurp(root / v.fast),
              bad = slurp(root / v.incorrect), hack = slurp(root / v.hack);
  // The scripted model: the same four kernels, in a fixed rotation, each answer made a distinct
  // program by one unused constant (a verbatim repeat would be skipped as a duplicate, and this
  // test measures the pipeline with every candidate compiled, checked and timed).
  PromptServer server([&](const std::string&, int n) {
    std::string tag = "\nconstexpr int kE2eAnswer = " + std::to_string(n) + ";\n";
    switch (n % 4) {
      case 0: return answer("plain", "start from the simple version", slow + tag);
      case 1: return answer("cached", "reuse results between calls", hack + tag);
      case 2: return answer("loose", "cut corners on precision and shapes", bad + tag);
      default: return answer("fast", "vectorize and fuse the passes", fast + tag);
    }
  });
  fs::path dir = temp_dir("e2e-" + v.task);
  // The queue variant on PostgreSQL when the machine has a server (KEVO_E2E_PG: its URL).
  const char* pg = getenv("KEVO_E2E_PG");
  const std::string where = v.queue && pg && *pg ? std::string(pg) : (dir / "runs.db").string();
  auto db = store::RunDb::open(where);
  ASSERT_TRUE(db) << db.error().message;
  auto cache = (*db)->handle() ? llm::ResponseCache::attach((*db)->handle())
                               : llm::ResponseCache::open((dir / "llm_cache.sqlite").string());
  ASSERT_TRUE(cache);
  std::shared_ptr<llm::ResponseCache> shared_cache = std::move(*cache);
  auto ctx = llm::make_context(llm::testing::test_config(server.base_url()), {.cache = shared_cache, .seed = 5});
  auto client = llm::make_client("fake:m1", ctx);
  ASSERT_TRUE(client) << client.error().message;
  auto evaluator = make_gpu_evaluator(4);
  llm::CancelToken cancel;
  EngineOptions o;
  auto s = preset("evoengineer-free");
  ASSERT_TRUE(s);
  o.strategy = *s;
  o.strategy.parallel = 4;
  o.budgets.max_candidates = 6;
  o.seed = 7;
  o.eval.seeds = 2;
  o.eval.time_budget_s = 1.5;
  o.work_dir = dir / "work";
  Engine e(*task, *evaluator, **db, client->get(), nullptr, cancel);
  std::unique_ptr<EvalPool> pool;
  std::unique_ptr<WorkerProcess> worker;
  if (v.queue) {
    auto q = make_queue_pool(**db, *task, {.slots = 4});
    ASSERT_TRUE(q) << q.error().message;
    pool = std::move(*q);
    e.set_pool(pool.get());
    worker = start_worker(where, dir);
  }
  const std::string mode = v.queue ? (store::is_postgres_url(where) ? "queue-postgresql" : "queue-sqlite") : "serial";
  // The device's own view of how busy it was: NVML's utilization (the share of time a kernel ran)
  // sampled twice a second while the run lasts, next to the engine's evaluator-busy fraction.
  std::atomic<bool> done{false};
  std::vector<double> util;
  std::thread sampler([&] {
    while (!done) {
      auto r = run_process({.argv = {"nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits",
                                     "-i", "0"},
                            .timeout = std::chrono::seconds(5)});
      if (r && r->ok()) util.push_back(std::atof(r->out.c_str()));
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  });
  auto out = e.start(o);
  done = true;
  sampler.join();
  double util_mean = 0;
  for (double u : util) util_mean += u / static_cast<double>(util.size());
  ASSERT_TRUE(out) << out.error().message;
  if (worker) {
    ::kill(worker->child.pid, SIGTERM);  // finishes what it holds, then exits 0
    auto st = wait_for_exit(worker->child, std::chrono::seconds(60));
    EXPECT_TRUE(st && WIFEXITED(*st) && WEXITSTATUS(*st) == 0) << slurp(worker->log);
    worker->child.pid = -1;
    std::printf("E2E %s queue worker: %s", v.task.c_str(), slurp(worker->log).c_str());
    auto jobs = (*db)->jobs(out->run_id);
    ASSERT_TRUE(jobs);
    for (const auto& j : *jobs) EXPECT_EQ(j.state, store::JobState::kDone) << j.id;
  }
  auto rows = (*db)->candidates(out->run_id);
  ASSERT_TRUE(rows);
  int hack_rejected = 0, bad_rejected = 0;
  for (const auto& r : *rows) {
    std::string phases;  // where the checker's time went (verdict.h)
    auto vj = nlohmann::json::parse(r.verdict_json.empty() ? "{}" : r.verdict_json, nullptr, false);
    if (!vj.is_discarded() && vj.contains("phases"))
      for (const auto& [k, sec] : vj["phases"].items()) phases += fmt::format(" {} {:.1f}s", k, sec.get<double>());
    if (!vj.is_discarded() && vj.contains("work_seconds")) {
      phases += " | work";
      for (const auto& [k, sec] : vj["work_seconds"].items()) phases += fmt::format(" {} {:.1f}s", k, sec.get<double>());
    }
    std::printf("E2E %s %s cand %d %-8s %s [%s] speedup %.3f |%s\n", v.task.c_str(), mode.c_str(), r.seq, r.name.c_str(),
                to_string(r.outcome), r.reason.c_str(), r.speedup, phases.c_str());
    if (r.name == "cached") {
      EXPECT_NE(r.outcome, store::CandidateOutcome::kPass) << r.message;
      hack_rejected += !r.passed();
    }
    if (r.name == "loose") {
      EXPECT_EQ(r.outcome, store::CandidateOutcome::kIncorrect) << r.message;
      bad_rejected += r.outcome == store::CandidateOutcome::kIncorrect;
    }
  }
  EXPECT_GT(hack_rejected, 0);
  EXPECT_GT(bad_rejected, 0);
  std::printf("E2E %s run stopped: %s; %s\n", v.task.c_str(), out->stop_reason.c_str(), out->note.c_str());
  ASSERT_NE(out->winner, 0) << "no winner passed held-out re-verification";
  auto w = std::find_if(rows->begin(), rows->end(), [&](const auto& r) { return r.id == out->winner; });
  ASSERT_NE(w, rows->end());
  EXPECT_EQ(w->name, "fast") << "the winner is not the fast correct variant";
  EXPECT_NE(w->source.find(fast.substr(0, 120)), std::string::npos);
  EXPECT_FALSE(out->best_failed_held_out);
  double minutes = out->wall_s / 60;
  std::printf("E2E %s %s winner %s speedup %.3f (re-timed %.3f), evaluator busy %.1f%%, GPU utilization "
              "%.1f%% (NVML, %zu samples), %.1f candidates/min (%d candidates in %.1f s)\n",
              v.task.c_str(), mode.c_str(), w->name.c_str(), out->best_speedup, out->winner_speedup,
              out->gpu_busy * 100, util_mean, util.size(), minutes > 0 ? out->candidates / minutes : 0,
              out->candidates, out->wall_s);
  std::printf("E2E %s time: baseline %.1f s, search %.1f s (%.1f candidates/min), held-out verification %.1f s\n",
              v.task.c_str(), out->baseline_s, out->search_s,
              out->search_s > 0 ? out->candidates * 60.0 / out->search_s : 0.0, out->verify_s);
}

}  // namespace

TEST(EvolveE2E, Softmax) {
  run_e2e({"softmax", "tasks/softmax/baseline.cu", "tests/gpu/kernels/good/softmax_online.cu",
           "tests/gpu/kernels/adversarial/hardcoded_shape.cu",
           "tests/gpu/kernels/adversarial/pointer_cache.cu"});
}

TEST(EvolveE2E, SoftmaxThroughTheQueue) {
  run_e2e({"softmax", "tasks/softmax/baseline.cu", "tests/gpu/kernels/good/softmax_online.cu",
           "tests/gpu/kernels/adversarial/hardcoded_shape.cu",
           "tests/gpu/kernels/adversarial/pointer_cache.cu", true});
}

TEST(EvolveE2E, Gelu) {
  run_e2e({"gelu", "tasks/gelu/baseline.cu", "tests/gpu/kernels/good/gelu_float4.cu",
           "tests/gpu/kernels/adversarial/lower_precision.cu",
           "tests/gpu/kernels/adversarial/legacy_stream.cu"});
}

// The same scripted gelu run with --profile, with and without the profile lines in the
// prompts. Children's prompts carry their parents' diagnoses only when the feedback is on; the
// cost is the prompts' extra length, printed per proposal (characters and ~tokens at 4 a token:
// the loopback model reports fixed usage). Skips without ncu or counter permission.
namespace {

struct FeedbackRun {
  int proposals = 0, with_profile = 0;
  double mean_chars = 0;
  std::string not_profiled;
};

FeedbackRun run_gelu_profiled(bool feedback) {
  FeedbackRun fr;
  fs::path root = src_dir();
  if (!getenv("KEVO_RUNNER")) {
    const char* b = getenv("KEVO_BUILD");
    setenv("KEVO_RUNNER", (fs::path(b && *b ? b : KEVO_BINARY_DIR) / "bin" / "kevo-runner").c_str(), 1);
  }
  auto task = load_task(root / "tasks" / "gelu");
  EXPECT_TRUE(task);
  if (!task) return fr;
  std::string slow = slurp(root / "tasks/gelu/baseline.cu"), fast = slurp(root / "tests/gpu/kernels/good/gelu_float4.cu");
  PromptServer server([&](const std::string&, int n) {
    std::string tag = "\nconstexpr int kE2eAnswer = " + std::to_string(n) + ";\n";
    return n % 2 ? answer("fast", "vectorize", fast + tag) : answer("plain", "simple", slow + tag);
  });
  fs::path dir = temp_dir(feedback ? "e2e-profile-on" : "e2e-profile-off");
  auto db = store::RunDb::open(dir / "runs.db");
  EXPECT_TRUE(db);
  auto cache = llm::ResponseCache::attach((*db)->handle());
  EXPECT_TRUE(cache);
  std::shared_ptr<llm::ResponseCache> shared_cache = std::move(*cache);
  auto ctx = llm::make_context(llm::testing::test_config(server.base_url()), {.cache = shared_cache, .seed = 5});
  auto client = llm::make_client("fake:m1", ctx);
  auto evaluator = make_gpu_evaluator(4);
  llm::CancelToken cancel;
  EngineOptions o;
  o.strategy = *preset("evoengineer-full");
  o.strategy.parallel = 1;
  o.strategy.profile_feedback = feedback;
  o.budgets.max_candidates = 5;
  o.seed = 7;
  o.eval.seeds = 1;
  o.eval.time_budget_s = 1.0;
  o.eval.profile = true;
  o.reuse_baseline = false;
  o.work_dir = dir / "work";
  Engine e(*task, *evaluator, **db, client->get(), nullptr, cancel);
  auto out = e.start(o);
  EXPECT_TRUE(out) << (out ? "" : out.error().message);
  if (!out) return fr;
  auto rows = (*db)->candidates(out->run_id);
  EXPECT_TRUE(rows);
  for (const auto& r : *rows) {
    auto a = profile_advice(r.verdict_json);
    if (!a.not_profiled.empty()) fr.not_profiled = a.not_profiled;
    if (r.prompt.empty()) continue;
    ++fr.proposals;
    fr.with_profile += r.prompt.find("\nprofile: ") != std::string::npos;
    fr.mean_chars += static_cast<double>(r.prompt.size());
  }
  if (fr.proposals) fr.mean_chars /= fr.proposals;
  return fr;
}

}  // namespace

TEST(EvolveE2E, ProfileFeedbackInPrompts) {
  auto gpu = run_process({.argv = {"nvidia-smi", "-L"}, .timeout = std::chrono::seconds(30)});
  if (!gpu || !gpu->ok()) GTEST_SKIP() << "GPU test skipped: no GPU (nvidia-smi found none)";
  FeedbackRun on = run_gelu_profiled(true);
  if (!on.not_profiled.empty()) GTEST_SKIP() << "not profiled: " << on.not_profiled;
  FeedbackRun off = run_gelu_profiled(false);
  std::printf("E2E_PROFILE feedback on: %d of %d prompts carry a parent's profile, mean prompt %.0f chars (~%.0f "
              "tokens)\nE2E_PROFILE feedback off: %d of %d, mean prompt %.0f chars (~%.0f tokens)\n",
              on.with_profile, on.proposals, on.mean_chars, on.mean_chars / 4, off.with_profile, off.proposals,
              off.mean_chars, off.mean_chars / 4);
  EXPECT_GT(on.with_profile, 0);
  EXPECT_EQ(off.with_profile, 0);
}

// Per-candidate overhead: gelu's baseline evaluated as a candidate against itself the way
// kevo evolve evaluates one (its evaluator, runners started ahead, visible configs, compile cached
// after the first), six times in one process; prints where each evaluation's time went.
TEST(EvalLatency, GeluBaselineThroughTheRunsEvaluator) {
  auto gpu = run_process({.argv = {"nvidia-smi", "-L"}, .timeout = std::chrono::seconds(30)});
  if (!gpu || !gpu->ok()) GTEST_SKIP() << "GPU test skipped: no GPU (nvidia-smi found none)";
  fs::path root = src_dir();
  if (const char* b = getenv("KEVO_BUILD"); b && *b && !getenv("KEVO_RUNNER"))
    setenv("KEVO_RUNNER", (fs::path(b) / "bin" / "kevo-runner").c_str(), 1);
  auto task = load_task(root / "tasks" / "gelu");
  ASSERT_TRUE(task) << task.error().message;
  auto evaluator = make_gpu_evaluator(4);
  EvalOptions o;
  o.visible_only = true;
  o.time_budget_s = 1;
  for (int i = 0; i < 6; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    Verdict v = evaluator->evaluate(*task, root / "tasks" / "gelu" / "baseline.cu", o);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(v.outcome, Outcome::Pass) << v.to_text();
    std::string parts;
    for (const auto& [p, s] : v.phases) parts += fmt::format(" {} {:.3f}", to_string(p), s);
    parts += " | work";
    for (const auto& [n, s] : v.work) parts += fmt::format(" {} {:.3f}", n, s);
    std::printf("EVAL_LATENCY gelu_baseline %d wall %.3f s | compile %.3f s%s |%s\n", i, wall,
                v.compile ? v.compile->seconds : 0.0, v.compile && v.compile->cache_hit ? " cached" : "", parts.c_str());
    std::fflush(stdout);
  }
}
