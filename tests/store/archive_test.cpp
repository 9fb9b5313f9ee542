// The kernel archive on both backends: entries added in one transaction, one per fingerprint, read
// back whole or light, and a JSONL export imported into a second database unchanged.
#include "archive/fingerprint.h"
#include "archive/jsonl.h"
#include "archive/task_features.h"
#include "backends.h"

namespace kevo::store {
namespace {

ArchiveRow entry(const std::string& task, const std::string& source, double speedup) {
  ArchiveRow r;
  r.kind = ArchiveKind::kWinner;
  r.task = task;
  r.gpu = "NVIDIA H100 80GB HBM3";
  r.arch = "sm_90";
  r.config = "main (N=1048576)";
  r.features_json = R"({"op_kind":"elementwise","dtypes":["f32"],"bound":"memory","shapes":["main: N=1048576"],"main_elements":2097152})";
  r.name = "float4 loads";
  r.rationale = "vectorized loads halve the instructions";
  r.source = source;
  r.diff = "-old\n+new\n";
  r.run_id = 3, r.candidate_id = 17, r.parent_id = 12;
  r.speedup = speedup, r.speedup_lo = speedup * 0.95, r.speedup_hi = speedup * 1.05;
  r.time_ms = 0.5, r.baseline_ms = 0.5 * speedup;
  r.sol_before = 0.3, r.sol_after = 0.3 * speedup;
  r.held_out = HeldOut::kPassed;
  r.origin = "run 3 of test";
  r.fingerprint = archive::fingerprint_of(r);
  return r;
}

class ArchiveStore : public StoreTest {};

TEST_P(ArchiveStore, EntriesAreKeptOncePerFingerprintAndReadBackWholeOrLight) {
  auto db = writer();
  ASSERT_TRUE(db);
  std::vector<ArchiveRow> rows = {entry("gelu", "k1", 2.0), entry("relu", "k2", 1.5), entry("gelu", "k1", 2.0)};
  auto added = db->add_archive(rows);
  ASSERT_TRUE(added) << added.error().message;
  EXPECT_EQ(*added, 2);  // the third is the first again
  EXPECT_GT(rows[0].id, 0);
  EXPECT_GT(rows[1].id, rows[0].id);
  EXPECT_EQ(rows[2].id, 0);
  std::vector<ArchiveRow> again = {entry("relu", "k2", 1.5)};
  EXPECT_EQ(*db->add_archive(again), 0);

  auto all = db->archive();
  ASSERT_TRUE(all) << all.error().message;
  ASSERT_EQ(all->size(), 2u);
  const ArchiveRow& a = (*all)[0];
  EXPECT_EQ(a.task, "gelu");
  EXPECT_EQ(a.source, "k1");
  EXPECT_EQ(a.rationale, "vectorized loads halve the instructions");
  EXPECT_EQ(a.held_out, HeldOut::kPassed);
  EXPECT_DOUBLE_EQ(a.sol_after, 0.6);
  EXPECT_EQ(a.parent_id, 12);
  EXPECT_GT(a.created_at, 0);
  auto light = db->archive(false);
  ASSERT_TRUE(light);
  EXPECT_EQ((*light)[1].task, "relu");
  EXPECT_TRUE((*light)[1].source.empty());
  EXPECT_EQ((*light)[1].features_json, (*all)[1].features_json);
  auto one = db->archive_entry(rows[1].id);
  ASSERT_TRUE(one);
  EXPECT_EQ(one->source, "k2");
  auto none = db->archive_entry(999);
  ASSERT_FALSE(none);
  EXPECT_TRUE(has(none.error().message, "no archive entry 999")) << none.error().message;
}

TEST_P(ArchiveStore, AReaderCannotAddAndTheArchiveIsUnchanged) {
  { ASSERT_TRUE(writer()); }
  auto ro = open(OpenMode::kReadOnly);
  ASSERT_TRUE(ro) << ro.error().message;
  std::vector<ArchiveRow> rows = {entry("gelu", "k1", 2.0)};
  EXPECT_FALSE((*ro)->add_archive(rows));
  EXPECT_EQ(rows[0].id, 0);
  EXPECT_TRUE((*ro)->archive()->empty());
}

TEST_P(ArchiveStore, ExportImportRoundTripKeepsEveryField) {
  auto db = writer();
  ASSERT_TRUE(db);
  std::vector<ArchiveRow> rows = {entry("gelu", "k1", 2.0), entry("softmax", "k2\nwith \"quotes\"\n", 3.25)};
  rows[1].kind = ArchiveKind::kImprovement;
  rows[1].held_out = HeldOut::kNotChecked;
  ASSERT_TRUE(db->add_archive(rows));
  const std::string text = archive::to_jsonl(*db->archive());

  auto parsed = archive::parse_jsonl(text, "lab.jsonl");
  ASSERT_TRUE(parsed) << parsed.error().message;
  // The second database is of the same backend: a fresh PostgreSQL database, or another file.
  test::TempDir other("kevo-archive-other");
  std::string where2 = (other.path / "b.db").string();
  if (pg()) {
    auto url = test::fresh_pg_database();
    ASSERT_TRUE(url) << url.error().message;
    where2 = *url;
  }
  auto second = RunDb::open(where2);
  ASSERT_TRUE(second) << second.error().message;
  ASSERT_EQ(*(*second)->add_archive(*parsed), 2);
  auto back = (*second)->archive();
  ASSERT_TRUE(back);
  ASSERT_EQ(back->size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const ArchiveRow &x = rows[i], &y = (*back)[i];
    EXPECT_EQ(y.fingerprint, x.fingerprint);
    EXPECT_EQ(y.kind, x.kind);
    EXPECT_EQ(y.source, x.source);
    EXPECT_EQ(y.features_json, archive::TaskFeatures::from_text(x.features_json).to_json().dump());
    EXPECT_DOUBLE_EQ(y.speedup_lo, x.speedup_lo);
    EXPECT_EQ(y.held_out, x.held_out);
    EXPECT_EQ(y.origin, fmt::format("imported from lab.jsonl line {} (was: run 3 of test)", i + 1));
  }
  // Importing the same file again adds nothing.
  auto twice = archive::parse_jsonl(text, "lab.jsonl");
  EXPECT_EQ(*(*second)->add_archive(*twice), 0);
}

INSTANTIATE_TEST_SUITE_P(Backends, ArchiveStore, ::testing::Values(Backend::kSqlite, Backend::kPostgres), backend_name);

}  // namespace
}  // namespace kevo::store
