// The store tests that apply to both backends are value-parameterised on Backend: each test gets a
// fresh location, a SQLite file in a scratch folder or a fresh database on the test binary's
// throwaway PostgreSQL server (support/pg_server.h; the PostgreSQL case skips, visibly, without one).
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "store/run_db.h"
#include "support/pg_server.h"
#include "support/temp_dir.h"

namespace kevo::store {

enum class Backend { kSqlite, kPostgres };

// For test names and messages: "sqlite" or "postgres" rather than the enum's bytes.
inline void PrintTo(Backend b, std::ostream* os) { *os << (b == Backend::kSqlite ? "sqlite" : "postgres"); }

inline std::string backend_name(const ::testing::TestParamInfo<Backend>& p) {
  return p.param == Backend::kSqlite ? "Sqlite" : "Postgres";
}

class StoreTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (pg()) {
      auto url = test::fresh_pg_database();
      if (!url) GTEST_SKIP() << url.error().message;
      where_ = *url;
    } else {
      dir_.emplace("kevo-store-test");
      where_ = (dir_->path / "runs.db").string();
    }
  }
  bool pg() const { return GetParam() == Backend::kPostgres; }
  Result<std::unique_ptr<RunDb>> open(OpenMode mode = OpenMode::kWrite) { return RunDb::open(where_, mode); }
  // Opens for writing; a failure fails the test (and returns null, so the caller should ASSERT on it).
  std::unique_ptr<RunDb> writer() {
    auto db = open();
    EXPECT_TRUE(db) << db.error().message;
    return db ? std::move(*db) : nullptr;
  }

  // SQL run on the database directly, not through kevo (to make foreign or newer databases).
  void raw_exec(const std::string& sql) {
    if (pg()) {
      pqxx::connection c(where_);
      pqxx::nontransaction tx(c);
      tx.exec(sql);
      return;
    }
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(where_.c_str(), &db), SQLITE_OK);
    char* err = nullptr;
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
    sqlite3_free(err);
    sqlite3_close(db);
  }
  // The names of the tables the database holds, sorted.
  std::vector<std::string> raw_tables() {
    std::vector<std::string> out;
    if (pg()) {
      pqxx::connection c(where_);
      pqxx::nontransaction tx(c);
      for (const auto& r : tx.exec("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1"))
        out.push_back(r[0].c_str());
      return out;
    }
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open_v2(where_.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' ORDER BY 1",
                       -1, &st, nullptr);
    while (sqlite3_step(st) == SQLITE_ROW) out.push_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
    sqlite3_finalize(st);
    sqlite3_close(db);
    return out;
  }

  std::optional<test::TempDir> dir_;  // SQLite: the file's scratch folder
  std::string where_;
};

inline int64_t make_run(RunDb& db, const std::string& task = "softmax") {
  RunRow r;
  r.task = task;
  r.task_dir = "/tasks/" + task;
  r.strategy = "eoh";
  r.config_json = "{}";
  auto id = db.create_run(r);
  EXPECT_TRUE(id) << (id ? "" : id.error().message);
  return id ? *id : 0;
}

inline bool has(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

}  // namespace kevo::store
