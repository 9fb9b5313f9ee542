// The run database: one SQLite file holding runs, candidates, LLM calls and events, plus the LLM
// module's answer cache (llm_cache) on the same connection. WAL journal, one connection (one
// writer); every candidate is committed in its own transaction together with the LLM calls that
// produced it, so a `kill -9` loses at most the candidates still in flight.
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

// Bumped on every incompatible change; an older file is migrated, a newer one is refused.
inline constexpr int kSchemaVersion = 1;

class RunDb {
 public:
  static Result<std::unique_ptr<RunDb>> open(const std::filesystem::path& path);
  ~RunDb();
  RunDb(const RunDb&) = delete;
  RunDb& operator=(const RunDb&) = delete;

  // For llm::ResponseCache::attach. The connection is opened serialized (SQLITE_OPEN_FULLMUTEX),
  // so the cache may use it from the proposal threads.
  sqlite3* handle() const { return db_; }
  const std::filesystem::path& path() const { return path_; }

  Result<int64_t> create_run(RunRow r);
  Status update_run(const RunRow& r);
  Result<RunRow> get_run(int64_t id);
  Result<std::vector<RunRow>> list_runs();

  // Inserts the candidate and its calls in one transaction; sets c.id and each call's ids.
  Status add_candidate(CandidateRow& c, std::vector<LlmCallRow> calls = {});
  Status add_llm_call(LlmCallRow c);  // a call that produced no candidate (failure, refusal)
  Result<std::vector<CandidateRow>> candidates(int64_t run_id);
  Result<CandidateRow> candidate(int64_t id);
  Status add_event(int64_t run_id, const std::string& kind, const std::string& data_json);
  Result<std::vector<EventRow>> events(int64_t run_id);
  Result<RunTotals> totals(int64_t run_id);

 private:
  RunDb(sqlite3* db, std::filesystem::path p) : db_(db), path_(std::move(p)) {}
  Status migrate();
  Status exec(const char* sql);
  sqlite3* db_;
  std::filesystem::path path_;
  std::mutex mu_;  // keeps a multi-statement transaction whole against other threads
};

double unix_now();

}  // namespace kevo::store
