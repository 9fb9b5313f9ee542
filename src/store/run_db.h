// The run database: runs, candidates, LLM calls, events, and the evaluation queue with the
// content-addressed files its jobs need. One interface, two backends:
//  - a SQLite file (the default; sqlite_run_db.h): WAL journal, one connection (one writer);
//  - a PostgreSQL server (`postgresql://` URL; pg_run_db.h), for runs whose workers live on
//    other hosts.
// Every candidate is committed in its own transaction together with the LLM calls that produced
// it, so a `kill -9` loses at most the candidates still in flight.
//
// Two ways to open it. Commands that write (`evolve`, `translate`, `bench`, `worker`) open it for
// writing: a missing SQLite file is created, an older schema is upgraded (a SQLite file after a
// backup copy). Commands that only read (`runs`, `show`, `export`, `bench table`, `report`) open
// it read-only: nothing is written (no migration, no pragma), so they never wait on or block a
// writer. A database that is not kevo's is refused untouched.
//
// Thread-safety: one RunDb may be used from several threads (each call is whole).
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "store/archive_row.h"
#include "store/records.h"
#include "util/result.h"

struct sqlite3;

namespace kevo::store {

// Bumped on every schema change; an older database is migrated (by writers only), a newer one is
// refused. 2: application_id set, run_resumes added. 3: jobs and blobs (the evaluation queue).
// 4: archive (the kernel archive, kept across runs).
inline constexpr int kSchemaVersion = 4;

// kevo's SQLite files say so in their header (PRAGMA application_id): "kevo" in ASCII.
inline constexpr int32_t kApplicationId = 0x6b65766f;

enum class OpenMode {
  kWrite,     // create when missing, upgrade an older schema
  kReadOnly,  // must exist and be kevo's; nothing is written
};

// True for "postgresql://..." and "postgres://..." (libpq's URI forms).
bool is_postgres_url(const std::string& where);

class RunDb {
 public:
  // `where`: a SQLite file path, or a PostgreSQL URL (is_postgres_url).
  static Result<std::unique_ptr<RunDb>> open(const std::string& where, OpenMode mode = OpenMode::kWrite);
  static Result<std::unique_ptr<RunDb>> open(const std::filesystem::path& path, OpenMode mode = OpenMode::kWrite) {
    return open(path.string(), mode);
  }
  static Result<std::unique_ptr<RunDb>> open(const char* where, OpenMode mode = OpenMode::kWrite) {
    return open(std::string(where), mode);
  }
  static Result<std::unique_ptr<RunDb>> open_read_only(const std::string& where) {
    return open(where, OpenMode::kReadOnly);
  }
  static Result<std::unique_ptr<RunDb>> open_read_only(const std::filesystem::path& path) {
    return open(path.string(), OpenMode::kReadOnly);
  }
  virtual ~RunDb() = default;
  RunDb(const RunDb&) = delete;
  RunDb& operator=(const RunDb&) = delete;

  virtual bool read_only() const = 0;
  // Where a SQLite file was copied before a schema upgrade in this open (empty: no upgrade, or
  // PostgreSQL, which upgrades in one transaction instead).
  virtual const std::filesystem::path& backup() const = 0;
  // The SQLite connection, for llm::ResponseCache::attach; null for PostgreSQL (the answer cache
  // then lives in its own local file).
  virtual sqlite3* handle() const { return nullptr; }
  // The file path, or the URL with any password removed: for messages.
  virtual std::string where() const = 0;
  // The schema version the database carries (kSchemaVersion after a writer's open).
  virtual Result<int> schema_version() = 0;

  virtual Result<int64_t> create_run(RunRow r) = 0;
  virtual Status update_run(const RunRow& r) = 0;
  virtual Result<RunRow> get_run(int64_t id) = 0;
  virtual Result<std::vector<RunRow>> list_runs() = 0;
  // Before a resume changes a run's row: keeps the row as it was (status, stop reason, note,
  // final result, options) in run_resumes, so no recorded outcome is lost.
  virtual Status record_resume(const RunRow& before) = 0;
  virtual Result<std::vector<RunRow>> resumes(int64_t run_id) = 0;  // the rows as they were, oldest first

  // Inserts the candidate and its calls in one transaction; sets c.id and each call's ids.
  virtual Status add_candidate(CandidateRow& c, std::vector<LlmCallRow> calls = {}) = 0;
  virtual Status add_llm_call(LlmCallRow c) = 0;  // a call that produced no candidate (failure, refusal)
  virtual Result<std::vector<CandidateRow>> candidates(int64_t run_id) = 0;
  virtual Result<CandidateRow> candidate(int64_t id) = 0;
  virtual Status add_event(int64_t run_id, const std::string& kind, const std::string& data_json) = 0;
  virtual Result<std::vector<EventRow>> events(int64_t run_id) = 0;
  virtual Result<RunTotals> totals(int64_t run_id) = 0;

  // --- The evaluation queue ---
  // Adds a job; idempotent on (run_id, seq): enqueuing the same seq again returns the first id and
  // changes nothing (a coordinator resumed after a crash re-enqueues what it had in flight).
  virtual Result<int64_t> enqueue(int64_t run_id, int64_t seq, const std::string& payload_json) = 0;
  // Claims the oldest queued job, or a claimed one whose lease has expired, for `worker` until
  // now + lease_s; attempts is incremented. A job whose lease expired after max_attempts claims
  // becomes kFailed (result_json says why) instead. run_id 0: a job of any run. Concurrent
  // claimers never get the same job (PostgreSQL: FOR UPDATE SKIP LOCKED). nullopt: nothing to do.
  virtual Result<std::optional<JobRow>> claim(const std::string& worker, double lease_s, int max_attempts,
                                              int64_t run_id = 0) = 0;
  // Extends the lease to now + lease_s. false: the job is no longer this worker's (its lease expired
  // and another worker claimed it, or it is finished); the worker should drop it.
  virtual Result<bool> heartbeat(int64_t job_id, const std::string& worker, double lease_s) = 0;
  // Writes the job's result once: the first completion wins (state kDone, worker, finished_at).
  // false: the job already had a result (a re-run after an expired lease); nothing changes.
  virtual Result<bool> complete(int64_t job_id, const std::string& worker, const std::string& result_json) = 0;
  // Gives a claimed job back (a worker stopping on SIGTERM): queued again, its attempt not counted.
  virtual Status release(int64_t job_id, const std::string& worker) = 0;
  virtual Result<JobRow> job(int64_t id) = 0;
  // The run's jobs with id > after_id, in id order; state: only those in it.
  virtual Result<std::vector<JobRow>> jobs(int64_t run_id, int64_t after_id = 0,
                                           std::optional<JobState> state = std::nullopt) = 0;

  // --- Content-addressed files (task files travel to workers through the database) ---
  // Stores bytes under their SHA-256 (hex, lowercase; util/hash.h); a second put is a no-op.
  virtual Result<std::string> put_blob(const std::string& bytes) = 0;
  virtual Result<std::optional<std::string>> blob(const std::string& sha256) = 0;

  // --- The kernel archive (archive_row.h): winners and notable improvements, kept across runs ---
  // Adds the entries in one transaction, all or none; an entry whose fingerprint is archived
  // already (or earlier in `rows`) is skipped with id 0. Sets each added entry's id; returns how
  // many were added.
  virtual Result<int> add_archive(std::vector<ArchiveRow>& rows) = 0;
  // Every entry in id order. with_text false leaves source, diff and rationale empty: what
  // retrieval scores, the features of many entries without their kernels.
  virtual Result<std::vector<ArchiveRow>> archive(bool with_text = true) = 0;
  virtual Result<ArchiveRow> archive_entry(int64_t id) = 0;

 protected:
  RunDb() = default;
};

double unix_now();

// Where a run keeps its working files (the kernels it writes to tune and verify) when no work dir
// is given: beside a SQLite file (PATH.work); for a PostgreSQL store, which is no local file, under
// the user's cache: cache_dir()/work/pg-<hash of where()>, so two databases never share one.
// The caller appends run-<id>.
std::filesystem::path default_work_dir(const RunDb& db);

}  // namespace kevo::store
