// Baselines verified once: the record's key covers the task's files, the GPUs, the
// toolkit and kevo; a run reuses a matching record instead of checking the baseline again, and
// says so; any change, or --reverify-baseline, checks it again.
#include <cstdlib>

#include "evolve/baseline_record.h"
#include "harness.h"
#include "support/temp_dir.h"

using namespace kevo;
using namespace kevo::evolve;
using namespace kevo::evolve::testing;
namespace fs = std::filesystem;

namespace {

// A machine with one "GPU": a stand-in nvidia-smi first on PATH, a kevo-runner to identify
// (this test binary stands in), and a cache of the test's own. Restores the environment after.
struct FakeMachine {
  kevo::test::TempDir dir{"kevo-baseline-record"};
  std::string old_path = getenv("PATH") ? getenv("PATH") : "";
  explicit FakeMachine(const std::string& gpu = "NVIDIA H100 80GB HBM3, 580.95") {
    fs::create_directories(dir.path / "bin");
    write(dir.path / "bin" / "nvidia-smi", "#!/bin/sh\necho '" + gpu + "'\n");
    fs::permissions(dir.path / "bin" / "nvidia-smi", fs::perms::owner_all);
    setenv("PATH", ((dir.path / "bin").string() + ":" + old_path).c_str(), 1);
    setenv("KEVO_RUNNER", fs::read_symlink("/proc/self/exe").c_str(), 1);
    setenv("KEVO_CACHE_DIR", (dir.path / "cache").c_str(), 1);
  }
  ~FakeMachine() {
    setenv("PATH", old_path.c_str(), 1);
    unsetenv("KEVO_RUNNER");
    unsetenv("KEVO_CACHE_DIR");
  }
};

// The marker evaluator dressed as a GPU one (a fake evaluator's baselines are never recorded).
class GpuLike final : public CandidateEvaluator {
 public:
  Verdict evaluate(const Task& t, const fs::path& f, const EvalOptions& o) override { return inner.evaluate(t, f, o); }
  Verdict evaluate_baseline(const Task& t, const EvalOptions& o) override {
    ++baselines;
    return inner.evaluate_baseline(t, o);
  }
  std::string cuda_version() override { return "CUDA 13.0"; }
  void remember_arch(const std::string& a) override { arch = a; }
  MarkerEvaluator inner;
  int baselines = 0;
  std::string arch;
};

}  // namespace

TEST(BaselineRecord, TheKeyChangesWithTheTaskTheGpuAndTheToolkit) {
  FakeMachine m;
  auto dir = temp_dir("brk");
  Task task = make_task(dir / "task");
  auto k1 = baseline_key(task, "CUDA 13.0");
  ASSERT_TRUE(k1) << k1.error().message;
  EXPECT_EQ(k1->gpus, "NVIDIA H100 80GB HBM3 (driver 580.95)");
  EXPECT_EQ(baseline_key(task, "CUDA 13.0")->digest(), k1->digest());
  EXPECT_NE(baseline_key(task, "CUDA 12.8")->digest(), k1->digest());
  write(dir / "task" / "baseline.cu", kernel_source("pass time_ms=1.9"));
  EXPECT_NE(baseline_key(task, "CUDA 13.0")->digest(), k1->digest());
  EXPECT_FALSE(baseline_key(task, ""));  // an unknown toolkit: no key, nothing reused
}

TEST(BaselineRecord, SavedRecordsComeBackOnlyForTheirKey) {
  FakeMachine m;
  auto dir = temp_dir("brs");
  Task task = make_task(dir / "task");
  auto k = baseline_key(task, "CUDA 13.0");
  ASSERT_TRUE(k);
  const fs::path store = m.dir.path / "records";
  EXPECT_FALSE(load_baseline_record(*k, store));
  ASSERT_TRUE(save_baseline_record(*k, {{"outcome", "pass"}, {"time_ms", 2.0}}, store));
  auto r = load_baseline_record(*k, store);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->summary.value("time_ms", 0.0), 2.0);
  EXPECT_GT(r->verified_at, 0);
  BaselineKey other = *k;
  other.gpus = "NVIDIA H200 (driver 580.95)";
  EXPECT_FALSE(load_baseline_record(other, store));
  // A failed baseline, or a damaged file, is no record.
  ASSERT_TRUE(save_baseline_record(*k, {{"outcome", "incorrect"}}, store));
  EXPECT_FALSE(load_baseline_record(*k, store));
  write(store / (k->digest() + ".json"), "{not json");
  EXPECT_FALSE(load_baseline_record(*k, store));
}

TEST(BaselineRecord, ASecondRunReusesTheVerifiedBaselineAndSaysSo) {
  FakeMachine m;
  Harness h(improving_kernels());
  GpuLike ev;
  auto o = h.options("evoengineer-free", 2);
  Engine e1(h.task, ev, *h.db, h.client.get(), nullptr, h.cancel);
  auto first = e1.start(o);
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_FALSE(first->baseline_reused);
  EXPECT_EQ(ev.baselines, 1);
  Engine e2(h.task, ev, *h.db, h.client.get(), nullptr, h.cancel);
  auto second = e2.start(o);
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_TRUE(second->baseline_reused);
  EXPECT_EQ(ev.baselines, 1);  // not checked again
  auto run = h.db->get_run(second->run_id);
  ASSERT_TRUE(run);
  EXPECT_NE(run->baseline_json.find("\"reused\""), std::string::npos) << run->baseline_json;
  auto events = h.db->events(second->run_id);
  ASSERT_TRUE(events);
  EXPECT_TRUE(std::any_of(events->begin(), events->end(), [](const auto& ev) { return ev.kind == "baseline_reused"; }));
  // Asked to, or with another GPU, it checks again.
  o.reuse_baseline = false;
  Engine e3(h.task, ev, *h.db, h.client.get(), nullptr, h.cancel);
  ASSERT_TRUE(e3.start(o));
  EXPECT_EQ(ev.baselines, 2);
  o.reuse_baseline = true;
  FakeMachine other("NVIDIA H200, 580.95");
  setenv("KEVO_CACHE_DIR", (m.dir.path / "cache").c_str(), 1);  // the same records, another GPU
  Engine e4(h.task, ev, *h.db, h.client.get(), nullptr, h.cancel);
  auto fourth = e4.start(o);
  ASSERT_TRUE(fourth);
  EXPECT_FALSE(fourth->baseline_reused);
  EXPECT_EQ(ev.baselines, 3);
}
