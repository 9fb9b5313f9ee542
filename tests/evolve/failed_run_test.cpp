// A run that fails before its search says what happened and what to do: on a host without a GPU
// it names --fake-gpu, says no candidate was evaluated (not that none passed held-out
// re-verification), and shows no occupancy figure over no candidate.
#include "harness.h"
#include "util/subprocess.h"

using namespace kevo;
using namespace kevo::evolve::testing;
namespace fs = std::filesystem;

TEST(FailedRun, WithoutAGpuItSaysWhatToDo) {
  if (find_program("nvidia-smi")) GTEST_SKIP() << "this machine may have a GPU";
  Harness h(improving_kernels());
  auto r = run_process({.argv = {(fs::path(KEVO_BINARY_DIR) / "bin" / "kevo").string(), "evolve", h.task.dir.string(),
                                 "--db", (h.dir / "cli.db").string(), "--budget-candidates", "2", "--quiet"},
                        .env_add = {{"HOME", h.dir.string()}, {"KEVO_DB", ""}},
                        .timeout = std::chrono::seconds(120)});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->exit_code, 3) << r->out << r->err;
  EXPECT_TRUE(contains(r->out, "stop: baseline_failed")) << r->out;
  EXPECT_TRUE(contains(r->err, "this host has no usable GPU")) << r->err;
  EXPECT_TRUE(contains(r->err, "--fake-gpu")) << r->err;
  EXPECT_TRUE(contains(r->out, "no candidate was evaluated: no winner")) << r->out;
  EXPECT_FALSE(contains(r->out, "held-out re-verification: no winner")) << r->out;
  EXPECT_TRUE(contains(r->out, "candidates 0 (valid 0)  evaluators busy n/a")) << r->out;
}
