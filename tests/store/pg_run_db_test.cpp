// What only the PostgreSQL backend has: URLs and their passwords, databases that are empty or
// another application's, connections the server drops, writers that create the schema at once.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include <pqxx/pqxx>

#include "store/backends.h"
#include "store/pg_run_db.h"
#include "support/pg_server.h"

namespace kevo::store {
namespace {

// A fresh database's URL, or skip (visibly) where there is no PostgreSQL server.
#define FRESH_PG_DATABASE(var)                         \
  auto var##_r = test::fresh_pg_database();            \
  if (!var##_r) GTEST_SKIP() << var##_r.error().message; \
  const std::string var = *var##_r

std::vector<std::string> tables_of(const std::string& url) {
  pqxx::connection c(url);
  pqxx::nontransaction tx(c);
  std::vector<std::string> out;
  for (const auto& r : tx.exec("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1"))
    out.push_back(r[0].c_str());
  return out;
}

TEST(PgRunDb, UrlsAreRecognisedAndTheirPasswordsNeverShown) {
  EXPECT_TRUE(is_postgres_url("postgresql://h/db"));
  EXPECT_TRUE(is_postgres_url("postgres:///db?host=/tmp"));
  EXPECT_FALSE(is_postgres_url("runs.db"));
  EXPECT_FALSE(is_postgres_url("/data/postgresql://x"));
  EXPECT_EQ(redact_postgres_url("postgresql://ada:s3cret@db.lab:5432/kevo?sslmode=require"),
            "postgresql://ada@db.lab:5432/kevo?sslmode=require");
  EXPECT_EQ(redact_postgres_url("postgresql://db.lab/kevo?user=ada&password=s3cret&sslmode=require"),
            "postgresql://db.lab/kevo?user=ada&sslmode=require");
  EXPECT_EQ(redact_postgres_url("postgres://ada:s3cret@db.lab"), "postgres://ada@db.lab");
  EXPECT_EQ(redact_postgres_url("postgresql:///kevo?host=/tmp/x"), "postgresql:///kevo?host=/tmp/x");
  // A server that is not there: the error names it, without the password.
  auto db = RunDb::open("postgresql://ada:s3cret@/kevo?host=/nonexistent-kevo-socket-dir&connect_timeout=2");
  ASSERT_FALSE(db);
  EXPECT_TRUE(has(db.error().message, "cannot connect to the run database postgresql://ada@/kevo"))
      << db.error().message;
  EXPECT_FALSE(has(db.error().message, "s3cret")) << db.error().message;
}

TEST(PgRunDb, AReaderOfAnEmptyDatabaseFailsClearlyAndCreatesNothing) {
  FRESH_PG_DATABASE(url);
  auto db = RunDb::open_read_only(url);
  ASSERT_FALSE(db);
  EXPECT_TRUE(has(db.error().message, "not a kevo run database")) << db.error().message;
  EXPECT_TRUE(has(db.error().message, "holds no kevo tables")) << db.error().message;
  EXPECT_TRUE(tables_of(url).empty());
  auto w = RunDb::open(url);  // a writer creates the schema
  ASSERT_TRUE(w) << w.error().message;
  EXPECT_EQ((*w)->handle(), nullptr);
  EXPECT_TRUE((*w)->backup().empty());
  EXPECT_EQ((*w)->where(), url);
  EXPECT_EQ(tables_of(url), (std::vector<std::string>{"archive", "blobs", "candidates", "events", "jobs", "kevo_meta",
                                                      "llm_calls", "run_resumes", "runs"}));
  auto r = RunDb::open_read_only(url);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE((*r)->list_runs()->empty());
}

TEST(PgRunDb, ADatabaseWithAnotherApplicationsMarkerIsRefusedUntouched) {
  FRESH_PG_DATABASE(url);
  {
    pqxx::connection c(url);
    pqxx::nontransaction tx(c);
    tx.exec("CREATE TABLE kevo_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
            "INSERT INTO kevo_meta VALUES ('application', 'other')");
  }
  auto db = RunDb::open(url);
  ASSERT_FALSE(db);
  EXPECT_TRUE(has(db.error().message, "another application")) << db.error().message;
  EXPECT_EQ(tables_of(url), std::vector<std::string>{"kevo_meta"});
}

// The server ends the session (as a restart or an administrator would): the next call is a clear
// error or succeeds on a new connection, and the one after it works.
TEST(PgRunDb, AConnectionTheServerDropsIsReopened) {
  FRESH_PG_DATABASE(url);
  auto db = RunDb::open(url);
  ASSERT_TRUE(db) << db.error().message;
  int64_t run = make_run(**db);
  {
    pqxx::connection admin(url);
    pqxx::nontransaction tx(admin);
    auto killed = tx.exec(
        "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity "  // waits until it has ended
        "WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'");
    ASSERT_EQ(killed.size(), 1u);
    EXPECT_TRUE(killed[0][0].as<bool>());
  }
  auto first = (*db)->get_run(run);
  if (!first) {
    EXPECT_TRUE(has(first.error().message, "connection")) << first.error().message;
    EXPECT_TRUE(has(first.error().message, (*db)->where())) << first.error().message;
    EXPECT_EQ(first.error().code, ErrorCode::kUnavailable) << first.error().message;
  }
  auto second = (*db)->get_run(run);
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_EQ(second->task, "softmax");
  EXPECT_TRUE((*db)->enqueue(run, 1, "{}"));
}

// Workers that start together all open (and so create) the schema at once: the advisory lock makes
// them take turns, and every one of them succeeds.
TEST(PgRunDb, WritersOpeningAnEmptyDatabaseAtOnceAllSucceed) {
  FRESH_PG_DATABASE(url);
  constexpr int kWriters = 4;
  std::atomic<int> ready{0};
  std::vector<std::string> errors(kWriters);
  std::vector<std::thread> threads;
  for (int i = 0; i < kWriters; ++i)
    threads.emplace_back([&, i] {
      ++ready;
      while (ready.load() < kWriters) std::this_thread::yield();
      auto db = RunDb::open(url);
      if (!db) errors[i] = db.error().message;
      else if (auto v = (*db)->schema_version(); !v || *v != kSchemaVersion) errors[i] = "wrong schema version";
    });
  for (auto& t : threads) t.join();
  for (const auto& e : errors) EXPECT_EQ(e, "");
}

TEST(PgRunDb, TheDefaultWorkDirIsInTheUsersCachePerDatabase) {
  FRESH_PG_DATABASE(url);
  auto db = RunDb::open(url);
  ASSERT_TRUE(db) << db.error().message;
  auto dir = default_work_dir(**db);
  EXPECT_EQ(dir.parent_path().filename(), "work");
  EXPECT_EQ(dir.filename().string().rfind("pg-", 0), 0u) << dir;
  EXPECT_FALSE(has(dir.string(), "postgresql")) << dir;
}

}  // namespace
}  // namespace kevo::store
