// The run database: schema, per-candidate transactions, totals, versioning.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>

#include "store/run_db.h"

namespace kevo::store {
namespace {

std::filesystem::path temp_db(const std::string& tag) {
  auto d = std::filesystem::temp_directory_path() / ("kevo-store-test-" + std::to_string(::getpid()) + "-" + tag);
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d / "runs.db";
}

TEST(RunDb, StoresRunsCandidatesCallsAndEvents) {
  auto path = temp_db("basic");
  int64_t run = 0, cid = 0;
  {
    auto db = RunDb::open(path);
    ASSERT_TRUE(db) << db.error().message;
    RunRow r;
    r.task = "softmax";
    r.task_dir = "/tasks/softmax";
    r.strategy = "eoh";
    r.config_json = R"({"x":1})";
    auto id = (*db)->create_run(r);
    ASSERT_TRUE(id);
    run = *id;
    CandidateRow c;
    c.run_id = run;
    c.seq = 1;
    c.op = "mutate";
    c.parents = {4, 9};
    c.source = "__global__ void k() {}";
    c.outcome = "pass";
    c.speedup = 1.5;
    c.speedup_lo = 1.4;
    c.speedup_hi = 1.6;
    c.accepted = true;
    LlmCallRow call;
    call.model = "fake:m1";
    call.input_tokens = 100;
    call.output_tokens = 50;
    call.cost_usd = 0.25;
    ASSERT_TRUE((*db)->add_candidate(c, {call}));
    cid = c.id;
    EXPECT_GT(cid, 0);
    LlmCallRow failed;
    failed.run_id = run;
    failed.model = "fake:m1";
    failed.error = "[transient] 503";
    ASSERT_TRUE((*db)->add_llm_call(failed));
    ASSERT_TRUE((*db)->add_event(run, "candidate", R"({"id":1})"));
    // The same seq twice is refused: a run's history is append-only.
    CandidateRow dup = c;
    EXPECT_FALSE((*db)->add_candidate(dup));
  }
  auto db = RunDb::open(path);  // reopened: everything is there
  ASSERT_TRUE(db);
  auto runs = (*db)->list_runs();
  ASSERT_TRUE(runs);
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ((*runs)[0].strategy, "eoh");
  EXPECT_EQ((*runs)[0].status, RunStatus::kRunning);
  auto cs = (*db)->candidates(run);
  ASSERT_TRUE(cs);
  ASSERT_EQ(cs->size(), 1u);
  EXPECT_EQ((*cs)[0].parents, (std::vector<int64_t>{4, 9}));
  EXPECT_TRUE((*cs)[0].accepted);
  EXPECT_DOUBLE_EQ((*cs)[0].speedup_hi, 1.6);
  auto t = (*db)->totals(run);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->candidates, 1);
  EXPECT_EQ(t->valid, 1);
  EXPECT_EQ(t->llm_calls, 2);
  EXPECT_EQ(t->tokens, 150);
  EXPECT_DOUBLE_EQ(t->cost_usd, 0.25);
  auto ev = (*db)->events(run);
  ASSERT_TRUE(ev);
  EXPECT_EQ(ev->size(), 1u);
  RunRow r = (*runs)[0];
  r.status = RunStatus::kFinished;
  r.final_json = R"({"winner":1})";
  ASSERT_TRUE((*db)->update_run(r));
  EXPECT_EQ((*db)->get_run(run)->status, RunStatus::kFinished);
  EXPECT_FALSE((*db)->get_run(run + 100));
  std::filesystem::remove_all(path.parent_path());
}

TEST(RunDb, WalModeAndSchemaVersion) {
  auto path = temp_db("version");
  {
    auto db = RunDb::open(path);
    ASSERT_TRUE(db);
    sqlite3_stmt* s = nullptr;
    sqlite3_prepare_v2((*db)->handle(), "PRAGMA journal_mode", -1, &s, nullptr);
    ASSERT_EQ(sqlite3_step(s), SQLITE_ROW);
    EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(s, 0)), "wal");
    sqlite3_finalize(s);
    sqlite3_prepare_v2((*db)->handle(), "PRAGMA user_version", -1, &s, nullptr);
    ASSERT_EQ(sqlite3_step(s), SQLITE_ROW);
    EXPECT_EQ(sqlite3_column_int(s, 0), kSchemaVersion);
    sqlite3_finalize(s);
    sqlite3_exec((*db)->handle(), "PRAGMA user_version = 99", nullptr, nullptr, nullptr);
  }
  auto newer = RunDb::open(path);
  ASSERT_FALSE(newer);
  EXPECT_NE(newer.error().message.find("newer"), std::string::npos);
  std::filesystem::remove_all(path.parent_path());
}

}  // namespace
}  // namespace kevo::store
