// The run database: one SQLite file holding runs, candidates, LLM calls and events, plus the LLM
// module's answer cache (llm_cache) on the same connection. WAL journal, one connection (one
// writer); every candidate is committed in its own transaction together with the LLM calls that
// produced it, so a `kill -9` loses at most the candidates still in flight.
//
// Two ways to open it. Commands that write (`evolve`, `translate`, `bench`) open it for writing:
// the file is created when missing, an older schema is upgraded after a backup copy of the file.
// Commands that only read (`runs`, `show`, `export`, `bench table`, `report`) open it read-only:
// the file must exist, nothing is written (no migration, no pragma), so they never wait on or
// block a writer, and an archived file on read-only storage can be read. Either way a SQLite file
// that is not kevo's (PRAGMA application_id, else its tables) is refused untouched.
//
// Thread-safety: one RunDb may be used from several threads (a mutex keeps each call whole).
// The public interface names no SQLite type except handle() (the LLM cache shares the
// connection), so a second backend could implement the same calls later.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "store/records.h"
#include "util/result.h"

struct sqlite3;

namespace kevo::store {

// Bumped on every schema change; an older file is migrated (by writers only, after a backup), a
// newer one is refused. 2: application_id set, run_resumes added.
inline constexpr int kSchemaVersion = 2;

// kevo's databases say so in their header (PRAGMA application_id): "kevo" in ASCII.
inline constexpr int32_t kApplicationId = 0x6b65766f;

enum class OpenMode {
  kWrite,     // create when missing, upgrade an older schema (backup first), WAL
  kReadOnly,  // must exist and be kevo's; nothing is written
};

class RunDb {
 public:
  static Result<std::unique_ptr<RunDb>> open(const std::filesystem::path& path, OpenMode mode = OpenMode::kWrite);
  static Result<std::unique_ptr<RunDb>> open_read_only(const std::filesystem::path& path) {
    return open(path, OpenMode::kReadOnly);
  }
  ~RunDb();
  RunDb(const RunDb&) = delete;
  RunDb& operator=(const RunDb&) = delete;

  bool read_only() const { return read_only_; }
  // Where the file was copied before a schema upgrade in this open (empty: no upgrade).
  const std::filesystem::path& backup() const { return backup_; }

  // For llm::ResponseCache::attach. The connection is opened serialized (SQLITE_OPEN_FULLMUTEX),
  // so the cache may use it from the proposal threads.
  sqlite3* handle() const { return db_; }
  const std::filesystem::path& path() const { return path_; }

  Result<int64_t> create_run(RunRow r);
  Status update_run(const RunRow& r);
  Result<RunRow> get_run(int64_t id);
  Result<std::vector<RunRow>> list_runs();
  // Before a resume changes a run's row: keeps the row as it was (status, stop reason, note,
  // final result, options) in run_resumes, so no recorded outcome is lost.
  Status record_resume(const RunRow& before);
  Result<std::vector<RunRow>> resumes(int64_t run_id);  // the rows as they were, oldest first

  // Inserts the candidate and its calls in one transaction; sets c.id and each call's ids.
  Status add_candidate(CandidateRow& c, std::vector<LlmCallRow> calls = {});
  Status add_llm_call(LlmCallRow c);  // a call that produced no candidate (failure, refusal)
  Result<std::vector<CandidateRow>> candidates(int64_t run_id);
  Result<CandidateRow> candidate(int64_t id);
  Status add_event(int64_t run_id, const std::string& kind, const std::string& data_json);
  Result<std::vector<EventRow>> events(int64_t run_id);
  Result<RunTotals> totals(int64_t run_id);

 private:
  RunDb(sqlite3* db, std::filesystem::path p, bool read_only)
      : db_(db), path_(std::move(p)), read_only_(read_only) {}
  Status check_identity(bool writing);
  Status migrate();
  Status exec(const char* sql);
  sqlite3* db_;
  std::filesystem::path path_;
  bool read_only_ = false;
  std::filesystem::path backup_;
  std::mutex mu_;  // keeps a multi-statement transaction whole against other threads
};

double unix_now();

}  // namespace kevo::store
