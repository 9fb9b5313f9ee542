// A run that cannot start on this host says what happened and what to do: on a host without a GPU
// it names the GPU, --fake-gpu and --compile-only, and records nothing (a failed run at every try
// would fill `kevo runs`).
#include "harness.h"
#include "store/run_db.h"
#include "util/subprocess.h"

using namespace kevo;
using namespace kevo::evolve::testing;
namespace fs = std::filesystem;

TEST(FailedRun, WithoutAGpuItSaysWhatToDoAndRecordsNothing) {
  if (find_program("nvidia-smi")) GTEST_SKIP() << "this machine may have a GPU";
  Harness h(improving_kernels());
  const fs::path db = h.dir / "cli.db";
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto r = run_process({.argv = {(fs::path(KEVO_BINARY_DIR) / "bin" / "kevo").string(), "evolve", h.task.dir.string(),
                                   "--db", db.string(), "--budget-candidates", "2", "--quiet"},
                          .env_add = {{"HOME", h.dir.string()}, {"KEVO_DB", ""}},
                          .timeout = std::chrono::seconds(120)});
    ASSERT_TRUE(r);
    EXPECT_EQ(r->exit_code, 3) << r->out << r->err;
    EXPECT_TRUE(contains(r->err, "the default GPU: no usable GPU")) << r->err;
    EXPECT_TRUE(contains(r->err, "nothing was recorded")) << r->err;
    EXPECT_TRUE(contains(r->err, "--fake-gpu")) << r->err;
    EXPECT_TRUE(contains(r->err, "--compile-only")) << r->err;
    EXPECT_FALSE(contains(r->out, "stop: baseline_failed")) << r->out;
  }
  auto store = store::RunDb::open(db.string());
  ASSERT_TRUE(store) << store.error().message;
  auto runs = (*store)->list_runs();
  ASSERT_TRUE(runs);
  EXPECT_TRUE(runs->empty()) << runs->size() << " run(s) recorded by attempts that could not start";
}
