// The run database in one SQLite file (the default backend). WAL journal, one connection opened
// serialized (SQLITE_OPEN_FULLMUTEX) plus a mutex that keeps each call's transaction whole; several
// processes on one host may share the file (claims are BEGIN IMMEDIATE transactions, and everyone
// waits up to a busy timeout for the write lock). The LLM answer cache (llm_cache) lives in the same
// file, on this connection (handle()).
//
// Opening (sqlite_schema.cpp): identity (PRAGMA application_id, else the tables), read-only opens
// that write nothing (and read a WAL archive on read-only storage as immutable), upgrades by writers
// only, after a `VACUUM INTO` backup copy of the file.
#pragma once

#include <sqlite3.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "store/run_db.h"
#include "store/sqlite_util.h"

namespace kevo::store {

class SqliteRunDb final : public RunDb {
 public:
  static Result<std::unique_ptr<RunDb>> open(const std::filesystem::path& path, OpenMode mode);
  ~SqliteRunDb() override;

  bool read_only() const override { return read_only_; }
  const std::filesystem::path& backup() const override { return backup_; }
  sqlite3* handle() const override { return db_; }
  std::string where() const override { return path_.string(); }
  Result<int> schema_version() override;

  Result<int64_t> create_run(RunRow r) override;
  Status update_run(const RunRow& r) override;
  Result<RunRow> get_run(int64_t id) override;
  Result<std::vector<RunRow>> list_runs() override;
  Status record_resume(const RunRow& before) override;
  Result<std::vector<RunRow>> resumes(int64_t run_id) override;

  Status add_candidate(CandidateRow& c, std::vector<LlmCallRow> calls = {}) override;
  Status add_llm_call(LlmCallRow c) override;
  Result<std::vector<CandidateRow>> candidates(int64_t run_id) override;
  Result<CandidateRow> candidate(int64_t id) override;
  Status add_event(int64_t run_id, const std::string& kind, const std::string& data_json) override;
  Result<std::vector<EventRow>> events(int64_t run_id) override;
  Result<RunTotals> totals(int64_t run_id) override;

  Result<int64_t> enqueue(int64_t run_id, int64_t seq, const std::string& payload_json) override;
  Result<std::optional<JobRow>> claim(const std::string& worker, double lease_s, int max_attempts,
                                      int64_t run_id = 0) override;
  Result<bool> heartbeat(int64_t job_id, const std::string& worker, double lease_s) override;
  Result<bool> complete(int64_t job_id, const std::string& worker, const std::string& result_json) override;
  Status release(int64_t job_id, const std::string& worker) override;
  Result<JobRow> job(int64_t id) override;
  Result<std::vector<JobRow>> jobs(int64_t run_id, int64_t after_id = 0,
                                   std::optional<JobState> state = std::nullopt) override;

  Result<std::string> put_blob(const std::string& bytes) override;
  Result<std::optional<std::string>> blob(const std::string& sha256) override;

  Result<int> add_archive(std::vector<ArchiveRow>& rows) override;
  Result<std::vector<ArchiveRow>> archive(bool with_text = true) override;
  Result<ArchiveRow> archive_entry(int64_t id) override;

 private:
  SqliteRunDb(sqlite3* db, std::filesystem::path p, bool read_only)
      : db_(db), path_(std::move(p)), read_only_(read_only) {}
  // sqlite_schema.cpp
  Status check_identity(bool writing);
  Status migrate();
  Status back_up(int version);
  // sqlite_run_db.cpp: small steps shared by the calls; the caller holds mu_.
  Error error(std::string_view what) const { return detail::db_error(db_, path_.string(), what); }
  Status exec(const char* sql);
  Status prepare(detail::Stmt& st, const std::string& sql, std::string_view what);
  Status step_done(detail::Stmt& st, std::string_view what);
  // Runs body in one BEGIN IMMEDIATE transaction: committed when it succeeds, rolled back if not.
  Status transaction(const std::function<Status()>& body);
  Status insert_call(LlmCallRow& c);
  Result<bool> job_exists(int64_t id);

  sqlite3* db_;
  std::filesystem::path path_;
  bool read_only_ = false;
  std::filesystem::path backup_;
  std::mutex mu_;  // keeps a multi-statement transaction whole against other threads
};

}  // namespace kevo::store
