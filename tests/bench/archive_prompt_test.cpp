// The archive across runs: a run's held-out winner is archived when it ends, and a later run of
// another task with info "archive" (preset kevo-archive) shows it in its prompts, saying where it
// came from and the GPU it was measured on; the default preset shows none.
#include "archive/fingerprint.h"
#include "harness.h"  // tests/evolve

namespace kevo::evolve::testing {
namespace {

Task second_task(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  std::string toml = kTaskToml;
  toml.replace(toml.find("vec_scale"), 9, "vec_double");
  write(dir / "task.toml", toml);
  write(dir / "baseline.cu", kernel_source("pass time_ms=2.0"));
  write(dir / "reference.cpp", "#include <kevo/reference.h>\n");
  auto t = load_task(dir);
  EXPECT_TRUE(t) << (t ? "" : t.error().message);
  return *t;
}

TEST(ArchivePrompts, AWinnerIsArchivedAndShownToTheNextTasksPrompts) {
  Harness h(improving_kernels());
  auto first = h.run(h.options("kevo-default", 4));
  ASSERT_TRUE(first) << first.error().message;
  ASSERT_GT(first->winner, 0);
  auto archived = h.db->archive();
  ASSERT_TRUE(archived);
  ASSERT_FALSE(archived->empty());
  const auto& winner = archived->back();
  EXPECT_EQ(winner.kind, store::ArchiveKind::kWinner);
  EXPECT_EQ(winner.candidate_id, first->winner);
  EXPECT_EQ(winner.held_out, store::HeldOut::kPassed);
  EXPECT_TRUE(winner.fake);
  EXPECT_DOUBLE_EQ(winner.speedup, first->winner_speedup);
  EXPECT_EQ(winner.fingerprint, archive::fingerprint_of(winner));
  EXPECT_FALSE(winner.diff.empty());
  EXPECT_TRUE(contains(winner.features_json, "\"op_kind\":\"elementwise\"")) << winner.features_json;
  EXPECT_FALSE(contains(winner.features_json, kHeldName));
  EXPECT_FALSE(contains(winner.features_json, kHeldValue));

  const size_t before = h.server.prompts().size();
  Task other = second_task(h.dir / "task2");
  Engine e(other, *h.eval, *h.db, h.client.get(), nullptr, h.cancel);
  auto second = e.start(h.options("kevo-archive", 2));
  ASSERT_TRUE(second) << second.error().message;
  auto prompts = h.server.prompts();
  ASSERT_GT(prompts.size(), before);
  const std::string& p = prompts[before];
  EXPECT_TRUE(contains(p, "## Examples from the archive")) << p;
  EXPECT_TRUE(contains(p, fmt::format("from: archive entry {}, run {} of {}", winner.id, first->run_id, h.db->where())))
      << p;
  EXPECT_TRUE(contains(p, "measured on: Fake H100 (marker evaluator), config main (N=1048576)")) << p;
  EXPECT_TRUE(contains(p, "a run's winner, verified on held-out shapes")) << p;
  EXPECT_FALSE(contains(p, kHeldName));
  auto stored = h.candidates(second->run_id);
  ASSERT_FALSE(stored.empty());
  EXPECT_TRUE(contains(stored[0].prompt, "## Examples from the archive"));  // what kevo show --candidate prints
  // The section in the test's XML report (--gtest_output=xml:FILE), for a person to read.
  const size_t at = stored[0].prompt.find("## Examples from the archive");
  RecordProperty("archive_section", stored[0].prompt.substr(at, stored[0].prompt.find("\n## ", at + 4) - at));

  // The default preset shows none.
  const size_t mark = h.server.prompts().size();
  auto third = e.start(h.options("kevo-default", 1));
  ASSERT_TRUE(third) << third.error().message;
  EXPECT_FALSE(contains(h.server.prompts().at(mark), "Examples from the archive"));
}

}  // namespace
}  // namespace kevo::evolve::testing
