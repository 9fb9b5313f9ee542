// A fake run never passes for a measured one: `kevo runs` marks it, and `kevo export` of it writes
// no speedup as if it had been verified (the kernel's header and README.txt say it was never run).
#include "harness.h"
#include "util/fs.h"
#include "util/subprocess.h"

using namespace kevo;
using namespace kevo::evolve::testing;
namespace fs = std::filesystem;

namespace {

RunResult kevo_in(const std::vector<std::string>& args, const fs::path& home) {
  std::vector<std::string> argv{(fs::path(KEVO_BINARY_DIR) / "bin" / "kevo").string()};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = run_process({.argv = argv, .env_add = {{"HOME", home.string()}, {"KEVO_DB", ""}},
                        .timeout = std::chrono::seconds(120)});
  EXPECT_TRUE(r);
  return r ? *r : RunResult{};
}

}  // namespace

TEST(FakeRuns, AreMarkedInTheListAndInAnExport) {
  Harness h(improving_kernels());
  const std::string db = (h.dir / "cli.db").string();
  auto ev = kevo_in({"evolve", h.task.dir.string(), "--fake-gpu", "--db", db, "--model", h.server.base_url() + "#m1",
                     "--strategy", "evoengineer-full", "--budget-candidates", "3", "--parallel", "1", "--quiet"},
                    h.dir);
  ASSERT_EQ(ev.exit_code, 0) << ev.out << ev.err;
  // A run with a winner ends with the commands that read it and export it, for this database.
  EXPECT_TRUE(contains(ev.out, "next: kevo show 1 --db " + db + " (the run, its lineage), kevo export 1 --db " + db))
      << ev.out;
  auto runs = kevo_in({"runs", "--db", db}, h.dir);
  EXPECT_EQ(runs.exit_code, 0) << runs.err;
  EXPECT_TRUE(contains(runs.out, "ok FAKE")) << runs.out;
  EXPECT_TRUE(contains(runs.out, "FAKE: a --fake-gpu run")) << runs.out;

  const fs::path out = h.dir / "export";
  auto ex = kevo_in({"export", "1", "--db", db, "-o", out.string()}, h.dir);
  ASSERT_EQ(ex.exit_code, 0) << ex.out << ex.err;
  EXPECT_TRUE(contains(ex.err, "fake evaluator")) << ex.err;
  for (const char* f : {"kernel.cu", "README.txt"}) {
    auto text = read_file(out / f);
    ASSERT_TRUE(text) << f;
    EXPECT_TRUE(contains(*text, "FAKE evaluator")) << f << ":\n" << *text;
    EXPECT_FALSE(contains(*text, "verified on held-out shapes")) << f << ":\n" << *text;
  }
  // A second export into the same folder replaces nothing unless asked to.
  auto again = kevo_in({"export", "1", "--db", db, "-o", out.string()}, h.dir);
  EXPECT_EQ(again.exit_code, 2) << again.out << again.err;
  EXPECT_TRUE(contains(again.err, "exists and is not empty: --force")) << again.err;
  auto forced = kevo_in({"export", "1", "--db", db, "-o", out.string(), "--force"}, h.dir);
  EXPECT_EQ(forced.exit_code, 0) << forced.out << forced.err;
  // A folder given with a trailing slash is named once: "ext/kernel.cu", never "ext//".
  auto slash = kevo_in({"export", "1", "--db", db, "-o", (h.dir / "out").string() + "/", "--torch",
                        (h.dir / "ext").string() + "/"}, h.dir);
  EXPECT_EQ(slash.exit_code, 0) << slash.out << slash.err;
  EXPECT_FALSE(contains(slash.out, "//")) << slash.out;
  EXPECT_TRUE(contains(slash.out, (h.dir / "ext").string() + "/{kernel.cu")) << slash.out;
}

// The winner is named by its id, which `kevo show --candidate` takes, and by its place in the run.
TEST(FakeRuns, TheWinnerIsNamedByIdAndByItsPlaceInTheRun) {
  Harness h(improving_kernels());
  const std::string db = (h.dir / "cli.db").string();
  for (int run = 0; run < 2; ++run) {  // the second run's ids continue after the first run's
    auto ev = kevo_in({"evolve", h.task.dir.string(), "--fake-gpu", "--db", db, "--model", h.server.base_url() + "#m1",
                       "--strategy", "evoengineer-full", "--budget-candidates", "3", "--parallel", "1", "--quiet"},
                      h.dir);
    ASSERT_EQ(ev.exit_code, 0) << ev.out << ev.err;
    if (run == 0) continue;
    const size_t at = ev.out.find("winner #");
    ASSERT_NE(at, std::string::npos) << ev.out;
    const int id = std::stoi(ev.out.substr(at + 8));
    EXPECT_GT(id, 3) << ev.out;  // a global id
    EXPECT_TRUE(contains(ev.out.substr(at), "winner #" + std::to_string(id) + " (seq ")) << ev.out;
    auto show = kevo_in({"show", "2", "--db", db}, h.dir);
    EXPECT_TRUE(contains(show.out, "lineage of the winner #" + std::to_string(id) + " (seq ")) << show.out;
  }
}
