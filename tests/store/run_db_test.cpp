// The run database: schema, per-candidate transactions, totals, versioning, identity. The tests
// that apply to both backends run on each (StoreTest, backends.h); the SQLite file's own
// behaviours (WAL, application_id, upgrade backups, read-only storage, a full disk) follow them.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <sys/mount.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "store/backends.h"
#include "store/run_db.h"
#include "support/small_fs.h"
#include "support/temp_dir.h"

namespace kevo::store {
namespace {

// ---------- Both backends ----------

using RunDbTest = StoreTest;
INSTANTIATE_TEST_SUITE_P(Backends, RunDbTest, ::testing::Values(Backend::kSqlite, Backend::kPostgres), backend_name);

TEST_P(RunDbTest, StoresRunsCandidatesCallsAndEvents) {
  int64_t run = 0, cid = 0;
  {
    auto db = writer();
    ASSERT_TRUE(db);
    RunRow r;
    r.task = "softmax";
    r.task_dir = "/tasks/softmax";
    r.strategy = "eoh";
    r.config_json = R"({"x":1})";
    auto id = db->create_run(r);
    ASSERT_TRUE(id) << id.error().message;
    run = *id;
    CandidateRow c;
    c.run_id = run;
    c.seq = 1;
    c.op = "mutate";
    c.parents = {4, 9};
    c.source = "__global__ void k() {}";
    c.outcome = CandidateOutcome::kPass;
    c.speedup = 1.5;
    c.speedup_lo = 1.4;
    c.speedup_hi = 1.6;
    c.accepted = true;
    LlmCallRow call;
    call.model = "fake:m1";
    call.input_tokens = 100;
    call.output_tokens = 50;
    call.cost_usd = 0.25;
    auto added = db->add_candidate(c, {call});
    ASSERT_TRUE(added) << added.error().message;
    cid = c.id;
    EXPECT_GT(cid, 0);
    LlmCallRow failed;
    failed.run_id = run;
    failed.model = "fake:m1";
    failed.error = "[transient] 503";
    ASSERT_TRUE(db->add_llm_call(failed));
    ASSERT_TRUE(db->add_event(run, "candidate", R"({"id":1})"));
    // The same seq twice is refused: a run's history is append-only.
    CandidateRow dup = c;
    EXPECT_FALSE(db->add_candidate(dup));
  }
  auto db = writer();  // reopened: everything is there
  ASSERT_TRUE(db);
  auto runs = db->list_runs();
  ASSERT_TRUE(runs) << runs.error().message;
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ((*runs)[0].strategy, "eoh");
  EXPECT_EQ((*runs)[0].config_json, R"({"x":1})");
  EXPECT_EQ((*runs)[0].status, RunStatus::kRunning);
  auto cs = db->candidates(run);
  ASSERT_TRUE(cs);
  ASSERT_EQ(cs->size(), 1u);
  EXPECT_EQ((*cs)[0].parents, (std::vector<int64_t>{4, 9}));
  EXPECT_TRUE((*cs)[0].accepted);
  EXPECT_DOUBLE_EQ((*cs)[0].speedup_hi, 1.6);
  EXPECT_EQ(db->candidate(cid)->source, "__global__ void k() {}");
  EXPECT_FALSE(db->candidate(cid + 100));
  auto t = db->totals(run);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->candidates, 1);
  EXPECT_EQ(t->valid, 1);
  EXPECT_EQ(t->llm_calls, 2);
  EXPECT_EQ(t->tokens, 150);
  EXPECT_DOUBLE_EQ(t->cost_usd, 0.25);
  auto ev = db->events(run);
  ASSERT_TRUE(ev);
  ASSERT_EQ(ev->size(), 1u);
  EXPECT_EQ((*ev)[0].data_json, R"({"id":1})");
  RunRow r = (*runs)[0];
  r.status = RunStatus::kFinished;
  r.final_json = R"({"winner":1})";
  ASSERT_TRUE(db->update_run(r));
  EXPECT_EQ(db->get_run(run)->status, RunStatus::kFinished);
  auto missing = db->get_run(run + 100);
  ASSERT_FALSE(missing);
  EXPECT_TRUE(has(missing.error().message, "no run")) << missing.error().message;
}

// A candidate's outcome is stored as its stable text (what SQL, older kevo versions and other
// readers see) and read back as the code; text this build does not know reads as kUnknown.
TEST_P(RunDbTest, OutcomesAreStoredAsTheirTextAndReadBackAsCodes) {
  const std::vector<CandidateOutcome> all = {
      CandidateOutcome::kPass,    CandidateOutcome::kCompileError, CandidateOutcome::kIncorrect,
      CandidateOutcome::kUnsafe,  CandidateOutcome::kTimeout,      CandidateOutcome::kCrash,
      CandidateOutcome::kInfraError, CandidateOutcome::kInvalidAnswer, CandidateOutcome::kDuplicate};
  int64_t run = 0;
  {
    auto db = writer();
    ASSERT_TRUE(db);
    run = make_run(*db);
    for (size_t i = 0; i < all.size(); ++i) {
      CandidateRow c;
      c.run_id = run;
      c.seq = static_cast<int>(i) + 1;
      c.outcome = all[i];
      ASSERT_TRUE(db->add_candidate(c));
    }
  }
  raw_exec("UPDATE candidates SET seq = seq + 100 WHERE outcome = 'invalid_answer'");
  raw_exec("UPDATE candidates SET outcome = 'from_a_newer_kevo' WHERE seq = 1");
  auto db = writer();
  ASSERT_TRUE(db);
  auto cs = db->candidates(run);
  ASSERT_TRUE(cs) << cs.error().message;
  ASSERT_EQ(cs->size(), all.size());
  for (const auto& c : *cs) {
    if (c.seq == 1) {
      EXPECT_EQ(c.outcome, CandidateOutcome::kUnknown);
    } else if (c.seq > 100) {
      EXPECT_EQ(c.outcome, CandidateOutcome::kInvalidAnswer);
    } else {
      EXPECT_EQ(c.outcome, all[static_cast<size_t>(c.seq) - 1]) << "seq " << c.seq;
    }
  }
  EXPECT_EQ(db->totals(run)->valid, 0);  // the one pass now reads 'from_a_newer_kevo'
}

TEST_P(RunDbTest, NewDatabasesCarryTheCurrentSchemaAndNewerOnesAreRefused) {
  {
    auto db = writer();
    ASSERT_TRUE(db);
    EXPECT_EQ(*db->schema_version(), kSchemaVersion);
    EXPECT_TRUE(db->backup().empty());  // a new database is not an upgrade
    EXPECT_FALSE(db->read_only());
  }
  raw_exec(pg() ? "UPDATE kevo_meta SET value = '99' WHERE key = 'schema_version'" : "PRAGMA user_version = 99");
  auto newer = open();
  ASSERT_FALSE(newer);
  EXPECT_TRUE(has(newer.error().message, "newer")) << newer.error().message;
}

TEST_P(RunDbTest, ReadOnlyOpenWritesNothing) {
  {
    auto db = writer();
    ASSERT_TRUE(db);
    make_run(*db);
  }
  auto ro = open(OpenMode::kReadOnly);
  ASSERT_TRUE(ro) << ro.error().message;
  EXPECT_TRUE((*ro)->read_only());
  auto runs = (*ro)->list_runs();
  ASSERT_TRUE(runs) << runs.error().message;
  ASSERT_EQ(runs->size(), 1u);
  RunRow r = (*runs)[0];
  r.note = "changed";
  EXPECT_FALSE((*ro)->update_run(r));  // the connection itself cannot write
  EXPECT_FALSE((*ro)->create_run(r));
  EXPECT_FALSE((*ro)->enqueue(r.id, 1, "{}"));
  EXPECT_EQ((*ro)->get_run(r.id)->note, "");
}

TEST_P(RunDbTest, AnotherApplicationsDatabaseIsRefusedUntouched) {
  raw_exec("CREATE TABLE users (name TEXT); INSERT INTO users VALUES ('ada');");
  for (auto mode : {OpenMode::kWrite, OpenMode::kReadOnly}) {
    auto db = open(mode);
    ASSERT_FALSE(db);
    EXPECT_TRUE(has(db.error().message, "not a kevo run database")) << db.error().message;
    EXPECT_TRUE(has(db.error().message, "users")) << db.error().message;
    EXPECT_TRUE(has(db.error().message, "left untouched")) << db.error().message;
  }
  EXPECT_EQ(raw_tables(), std::vector<std::string>{"users"});
}

TEST_P(RunDbTest, AResumeKeepsTheRowAsItWas) {
  auto db = writer();
  ASSERT_TRUE(db);
  int64_t id = make_run(*db);
  auto row = db->get_run(id);
  ASSERT_TRUE(row);
  row->status = RunStatus::kInterrupted;
  row->stop_reason = "interrupted";
  row->note = "first session";
  ASSERT_TRUE(db->update_run(*row));
  ASSERT_TRUE(db->record_resume(*db->get_run(id)));
  row->status = RunStatus::kFinished;
  row->stop_reason = "budget_candidates";
  row->note = "second session";
  ASSERT_TRUE(db->update_run(*row));
  auto kept = db->resumes(id);
  ASSERT_TRUE(kept) << kept.error().message;
  ASSERT_EQ(kept->size(), 1u);
  EXPECT_EQ((*kept)[0].status, RunStatus::kInterrupted);
  EXPECT_EQ((*kept)[0].stop_reason, "interrupted");
  EXPECT_EQ((*kept)[0].note, "first session");
  EXPECT_EQ((*kept)[0].task, "softmax");
  EXPECT_FALSE(db->resumes(id + 100));
}

// Readers in threads, each with its own read-only connection, while a writer commits a candidate
// every 100 ms (as kevo evolve does). Every read must succeed.
TEST_P(RunDbTest, HundredConcurrentReadersWhileAWriterCommits) {
  auto writer_db = writer();
  ASSERT_TRUE(writer_db);
  int64_t run = make_run(*writer_db);
  std::atomic<bool> stop{false};
  std::atomic<int> written{0};
  std::thread w([&] {
    for (int seq = 1; !stop; ++seq) {
      CandidateRow c;
      c.run_id = run;
      c.seq = seq;
      c.source = std::string(2000, 'x');
      if (writer_db->add_candidate(c)) ++written;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  std::atomic<int> failures{0};
  std::string first_failure;
  std::mutex mu;
  std::vector<std::thread> readers;
  for (int i = 0; i < 100; ++i)
    readers.emplace_back([&, i] {
      auto fail = [&](const std::string& m) {
        std::lock_guard l(mu);
        if (failures++ == 0) first_failure = m;
      };
      auto db = open(OpenMode::kReadOnly);
      if (!db) return fail(db.error().message);
      auto runs = (*db)->list_runs();
      if (!runs) return fail(runs.error().message);
      auto cands = (*db)->candidates(run);
      if (!cands) return fail(cands.error().message);
      if (i % 2) {
        auto t = (*db)->totals(run);
        if (!t) return fail(t.error().message);
      }
    });
  for (auto& t : readers) t.join();
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  stop = true;
  w.join();
  EXPECT_EQ(failures.load(), 0) << first_failure;
  EXPECT_GE(written.load(), 2);
}

// ---------- The SQLite file ----------

std::filesystem::path temp_db(const std::string& tag) {
  return kevo::test::temp_dir_until_exit("kevo-store-test-" + tag) / "runs.db";
}

std::string bytes_of(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

int exec(sqlite3* db, const char* sql) { return sqlite3_exec(db, sql, nullptr, nullptr, nullptr); }

TEST(RunDbSqlite, WalModeAndApplicationId) {
  auto path = temp_db("version");
  auto db = RunDb::open(path);
  ASSERT_TRUE(db);
  EXPECT_EQ((*db)->where(), path.string());
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2((*db)->handle(), "PRAGMA journal_mode", -1, &s, nullptr);
  ASSERT_EQ(sqlite3_step(s), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(s, 0)), "wal");
  sqlite3_finalize(s);
  sqlite3_prepare_v2((*db)->handle(), "PRAGMA application_id", -1, &s, nullptr);
  ASSERT_EQ(sqlite3_step(s), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(s, 0), kApplicationId);
  sqlite3_finalize(s);
  std::filesystem::remove_all(path.parent_path());
}

TEST(RunDbSqlite, ReadOnlyOpenOfAMissingPathCreatesNothing) {
  auto path = temp_db("missing");
  auto nested = path.parent_path() / "no" / "such" / "runs.db";
  auto r = RunDb::open_read_only(nested);
  ASSERT_FALSE(r);
  EXPECT_TRUE(has(r.error().message, "no such run database")) << r.error().message;
  EXPECT_FALSE(std::filesystem::exists(path.parent_path() / "no"));
  std::filesystem::remove_all(path.parent_path());
}

TEST(RunDbSqlite, ReadOnlyOpenLeavesTheFileByteForByte) {
  auto path = temp_db("ro");
  {
    auto db = RunDb::open(path);
    ASSERT_TRUE(db);
    make_run(**db);
  }  // closed: the WAL is checkpointed into the file and removed
  const std::string before = bytes_of(path);
  {
    auto db = RunDb::open_read_only(path);
    ASSERT_TRUE(db) << db.error().message;
    ASSERT_TRUE((*db)->list_runs());
    EXPECT_FALSE((*db)->update_run(*(*db)->get_run(1)));
  }
  EXPECT_EQ(bytes_of(path), before);
  std::filesystem::remove_all(path.parent_path());
}

TEST(RunDbSqlite, AnotherApplicationsIdIsRefusedEvenWithKevoTables) {
  auto path = temp_db("foreign-id");
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(exec(raw, "CREATE TABLE runs (id INTEGER); PRAGMA application_id = 1234;"), SQLITE_OK);
  sqlite3_close(raw);
  const std::string before = bytes_of(path);
  auto db = RunDb::open(path);
  ASSERT_FALSE(db);
  EXPECT_TRUE(has(db.error().message, "another application")) << db.error().message;
  EXPECT_EQ(bytes_of(path), before);
  std::filesystem::remove_all(path.parent_path());
}

// A file as kevo's schema version 1 wrote it: no application_id, no run_resumes, no queue.
void write_v1(const std::filesystem::path& path) {
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(exec(raw,
                 "PRAGMA journal_mode=WAL;"
                 "CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, created_at REAL NOT NULL, updated_at REAL "
                 "NOT NULL, task TEXT NOT NULL, task_dir TEXT NOT NULL, strategy TEXT NOT NULL, config TEXT NOT NULL, "
                 "status TEXT NOT NULL, stop_reason TEXT NOT NULL DEFAULT '', best_candidate INTEGER NOT NULL DEFAULT 0, "
                 "best_speedup REAL NOT NULL DEFAULT 0, baseline TEXT NOT NULL DEFAULT '', final TEXT NOT NULL DEFAULT "
                 "'', note TEXT NOT NULL DEFAULT '');"
                 "CREATE TABLE candidates (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id INTEGER NOT NULL, seq INTEGER "
                 "NOT NULL, generation INTEGER NOT NULL, island INTEGER NOT NULL, repair_round INTEGER NOT NULL, "
                 "operator TEXT NOT NULL, parents TEXT NOT NULL, model TEXT NOT NULL, prompt TEXT NOT NULL, answer "
                 "TEXT NOT NULL, name TEXT NOT NULL, rationale TEXT NOT NULL, source TEXT NOT NULL, outcome TEXT NOT "
                 "NULL, reason TEXT NOT NULL, message TEXT NOT NULL, compile TEXT NOT NULL, verdict TEXT NOT NULL, "
                 "features TEXT NOT NULL, flags TEXT NOT NULL, speedup REAL NOT NULL, speedup_lo REAL NOT NULL, "
                 "speedup_hi REAL NOT NULL, time_ms REAL NOT NULL, accepted INTEGER NOT NULL, created_at REAL NOT "
                 "NULL, UNIQUE (run_id, seq));"
                 "CREATE TABLE llm_calls (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id INTEGER NOT NULL, candidate_id "
                 "INTEGER NOT NULL, model TEXT NOT NULL, purpose TEXT NOT NULL, input_tokens INTEGER NOT NULL, "
                 "output_tokens INTEGER NOT NULL, cost_usd REAL NOT NULL, latency_s REAL NOT NULL, from_cache INTEGER "
                 "NOT NULL, error TEXT NOT NULL, created_at REAL NOT NULL);"
                 "CREATE TABLE events (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id INTEGER NOT NULL, t REAL NOT NULL, "
                 "kind TEXT NOT NULL, data TEXT NOT NULL);"
                 "INSERT INTO runs (created_at, updated_at, task, task_dir, strategy, config, status) VALUES "
                 "(1, 1, 'gelu', '/t/gelu', 'eoh', '{}', 'finished');"
                 "PRAGMA user_version = 1;"),
            SQLITE_OK);
  sqlite3_close(raw);
}


TEST(RunDbSqlite, ReadersLeaveAnOldSchemaAloneWritersUpgradeAfterABackup) {
  auto path = temp_db("upgrade");
  write_v1(path);
  const std::string v1 = bytes_of(path);
  {
    auto ro = RunDb::open_read_only(path);
    ASSERT_TRUE(ro) << ro.error().message;
    auto runs = (*ro)->list_runs();
    ASSERT_TRUE(runs) << runs.error().message;
    EXPECT_EQ(runs->size(), 1u);
    EXPECT_EQ(*(*ro)->schema_version(), 1);
  }
  EXPECT_EQ(bytes_of(path), v1);  // no migration from a read
  auto db = RunDb::open(path);
  ASSERT_TRUE(db) << db.error().message;
  EXPECT_EQ(*(*db)->schema_version(), kSchemaVersion);
  auto backup = (*db)->backup();
  ASSERT_FALSE(backup.empty());
  EXPECT_EQ(backup.string(), path.string() + ".v1.bak");
  ASSERT_TRUE(std::filesystem::exists(backup));
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open_v2(backup.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(raw, "SELECT (SELECT user_version FROM pragma_user_version), (SELECT COUNT(*) FROM runs)", -1,
                     &s, nullptr);
  ASSERT_EQ(sqlite3_step(s), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(s, 0), 1);
  EXPECT_EQ(sqlite3_column_int(s, 1), 1);
  sqlite3_finalize(s);
  sqlite3_close(raw);
  // The upgraded file has the queue: the old run can take jobs.
  auto job = (*db)->enqueue(1, 1, "{}");
  ASSERT_TRUE(job) << job.error().message;
  EXPECT_TRUE((*db)->put_blob("x"));
  auto again = RunDb::open(path);  // already upgraded: no second backup
  ASSERT_TRUE(again);
  EXPECT_TRUE((*again)->backup().empty());
  std::filesystem::remove_all(path.parent_path());
}

// A small tmpfs (root only; skipped elsewhere) for the faults of real storage.
using test::SmallFs;

TEST(RunDbSqlite, DiskFullIsAClearErrorAndTheFileStillOpens) {
  SmallFs fs("full", "size=600k");
  if (!fs.ok) GTEST_SKIP() << "cannot mount a tmpfs (needs root)";
  auto path = fs.dir / "runs.db";
  int64_t run = 0;
  int committed = 0;
  std::string error;
  {
    auto db = RunDb::open(path);
    ASSERT_TRUE(db) << db.error().message;
    run = make_run(**db);
    for (int seq = 1; seq < 1000; ++seq) {
      CandidateRow c;
      c.run_id = run;
      c.seq = seq;
      c.source = std::string(20000, static_cast<char>('a' + seq % 26));
      auto st = (*db)->add_candidate(c);
      if (!st) {
        error = st.error().message;
        break;
      }
      ++committed;
    }
  }
  ASSERT_FALSE(error.empty()) << "the file system never filled";
  EXPECT_TRUE(has(error, "no space left")) << error;
  EXPECT_TRUE(has(error, "--resume")) << error;
  auto ro = RunDb::open_read_only(path);
  ASSERT_TRUE(ro) << ro.error().message;
  auto cands = (*ro)->candidates(run);
  ASSERT_TRUE(cands) << cands.error().message;
  EXPECT_EQ(static_cast<int>(cands->size()), committed);  // every committed candidate is there
}

TEST(RunDbSqlite, AnArchiveOnReadOnlyStorageCanBeRead) {
  SmallFs fs("ro", "size=4m");
  if (!fs.ok) GTEST_SKIP() << "cannot mount a tmpfs (needs root)";
  auto path = fs.dir / "runs.db";
  {
    auto db = RunDb::open(path);
    ASSERT_TRUE(db);
    make_run(**db);
  }
  ASSERT_EQ(::mount(nullptr, fs.dir.c_str(), nullptr, MS_REMOUNT | MS_RDONLY, nullptr), 0) << std::strerror(errno);
  auto db = RunDb::open_read_only(path);
  ASSERT_TRUE(db) << db.error().message;
  auto runs = (*db)->list_runs();
  ASSERT_TRUE(runs) << runs.error().message;
  EXPECT_EQ(runs->size(), 1u);
}

TEST(RunDbSqlite, TheDefaultWorkDirIsBesideTheFile) {
  auto path = temp_db("work");
  auto db = RunDb::open(path);
  ASSERT_TRUE(db);
  EXPECT_EQ(default_work_dir(**db), std::filesystem::path(path.string() + ".work"));
  std::filesystem::remove_all(path.parent_path());
}

}  // namespace
}  // namespace kevo::store
