// The run database on a PostgreSQL server (a `postgresql://` URL), for runs whose workers live on
// other hosts. The same tables as the SQLite file in PostgreSQL types, plus kevo_meta (the schema
// version and an identity marker). One connection per RunDb, used by one call at a time
// (detail::PgSession); a connection the server dropped is an error naming the server and the cause,
// and the next call connects again.
//
// Opening (pg_schema.cpp): a database with kevo_meta is kevo's; one without it is refused untouched
// if it holds any other table, created by a writer if it is empty, and refused by a reader. Writers
// create or upgrade the schema in one transaction under an advisory lock, so workers that start
// together do not race; readers set default_transaction_read_only and change nothing. Queue times
// are the server's clock, so workers on hosts whose clocks differ still agree on leases.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "store/run_db.h"

namespace kevo::store {

namespace detail {
class PgSession;
}

// The URL without its password (user:PASSWORD@ before the host, password=... in the query).
std::string redact_postgres_url(const std::string& url);

class PgRunDb final : public RunDb {
 public:
  static Result<std::unique_ptr<RunDb>> open(const std::string& url, OpenMode mode);
  ~PgRunDb() override;

  bool read_only() const override { return read_only_; }
  const std::filesystem::path& backup() const override { return no_backup_; }
  std::string where() const override;
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
  PgRunDb(std::unique_ptr<detail::PgSession> s, bool read_only);
  // pg_schema.cpp
  Status check_identity(bool writing);
  Status migrate();

  std::unique_ptr<detail::PgSession> s_;
  bool read_only_;
  std::filesystem::path no_backup_;  // upgrades are one transaction: no copy is made
};

}  // namespace kevo::store
