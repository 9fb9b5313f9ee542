// The PostgreSQL backend's evaluation queue and content-addressed blobs. Claims lock the row they
// take with FOR UPDATE SKIP LOCKED, so concurrent claimers on any host never get the same job and
// never wait on each other; lease times are the server's clock.
#include "store/pg_run_db.h"
#include "store/pg_session.h"
#include "util/hash.h"

namespace kevo::store {

namespace {

using detail::str;

// The server's clock in unix seconds (the same on every worker, whatever its own clock says).
#define KEVO_PG_NOW "extract(epoch from clock_timestamp())"

constexpr const char* kJobColumns =
    "id, run_id, seq, payload, state, attempts, worker, lease_until, result, created_at, finished_at";

JobRow read_job(const pqxx::row& row) {
  JobRow j;
  int i = 0;
  j.id = row[i++].as<int64_t>();
  j.run_id = row[i++].as<int64_t>();
  j.seq = row[i++].as<int64_t>();
  j.payload_json = str(row[i++]);
  j.state = parse_job_state(str(row[i++])).value_or(JobState::kQueued);
  j.attempts = row[i++].as<int>();
  j.worker = str(row[i++]);
  j.lease_until = row[i++].as<double>();
  j.result_json = str(row[i++]);
  j.created_at = row[i++].as<double>();
  j.finished_at = row[i++].as<double>();
  return j;
}

// Expired leases that used up their attempts are given up (kFailed) before a claim looks, so they
// are never claimed again.
void give_up_expired(pqxx::transaction_base& tx, int max_attempts, int64_t run_id) {
  tx.exec_params(
      "UPDATE jobs SET state='failed', finished_at=" KEVO_PG_NOW ", result='{\"error\":\"lease expired ' || "
      "attempts || ' times (workers died or hung)\"}' WHERE id IN (SELECT id FROM jobs WHERE state='claimed' "
      "AND lease_until < " KEVO_PG_NOW " AND attempts >= $1 AND ($2::bigint = 0 OR run_id = $2::bigint) "
      "FOR UPDATE SKIP LOCKED)",
      max_attempts, run_id);
}

}  // namespace

Result<int64_t> PgRunDb::enqueue(int64_t run_id, int64_t seq, const std::string& payload_json) {
  return s_->run("enqueue job", [&](pqxx::transaction_base& tx) -> Result<int64_t> {
    auto res = tx.exec_params(
        "INSERT INTO jobs (run_id, seq, payload, state, created_at) VALUES ($1, $2, $3, 'queued', " KEVO_PG_NOW
        ") ON CONFLICT (run_id, seq) DO NOTHING RETURNING id",
        run_id, seq, payload_json);
    if (!res.empty()) return res[0][0].as<int64_t>();
    return tx.exec_params1("SELECT id FROM jobs WHERE run_id=$1 AND seq=$2", run_id, seq)[0].as<int64_t>();
  });
}

Result<std::optional<JobRow>> PgRunDb::claim(const std::string& worker, double lease_s, int max_attempts,
                                             int64_t run_id) {
  return s_->run("claim job", [&](pqxx::transaction_base& tx) -> Result<std::optional<JobRow>> {
    give_up_expired(tx, max_attempts, run_id);
    auto res = tx.exec_params(
        fmt::format("UPDATE jobs SET state='claimed', attempts=attempts+1, worker=$1, "
                    "lease_until=" KEVO_PG_NOW " + $2::double precision "
                    "WHERE id = (SELECT id FROM jobs WHERE (state='queued' OR (state='claimed' AND "
                    "lease_until < " KEVO_PG_NOW " AND attempts < $3)) AND ($4::bigint = 0 OR run_id = $4::bigint) "
                    "ORDER BY id FOR UPDATE SKIP LOCKED LIMIT 1) RETURNING {}",
                    kJobColumns),
        worker, lease_s, max_attempts, run_id);
    if (res.empty()) return std::optional<JobRow>();
    return std::optional<JobRow>(read_job(res[0]));
  });
}

Result<bool> PgRunDb::heartbeat(int64_t job_id, const std::string& worker, double lease_s) {
  return s_->run("renew lease", [&](pqxx::transaction_base& tx) -> Result<bool> {
    auto res = tx.exec_params("UPDATE jobs SET lease_until=" KEVO_PG_NOW " + $1::double precision "
                              "WHERE id=$2 AND worker=$3 AND state='claimed'",
                              lease_s, job_id, worker);
    return res.affected_rows() == 1;
  });
}

Result<bool> PgRunDb::complete(int64_t job_id, const std::string& worker, const std::string& result_json) {
  return s_->run("complete job", [&](pqxx::transaction_base& tx) -> Result<bool> {
    // Done and failed are final: a result that comes after either changes nothing.
    auto res = tx.exec_params("UPDATE jobs SET state='done', result=$1, worker=$2, finished_at=" KEVO_PG_NOW
                              " WHERE id=$3 AND state IN ('queued', 'claimed')",
                              result_json, worker, job_id);
    if (res.affected_rows() == 1) return true;
    if (tx.exec_params("SELECT 1 FROM jobs WHERE id=$1", job_id).empty())
      return fail("run database {}: no job {}", s_->shown(), job_id);
    return false;
  });
}

Status PgRunDb::release(int64_t job_id, const std::string& worker) {
  return s_->run("release job", [&](pqxx::transaction_base& tx) -> Status {
    tx.exec_params(
        "UPDATE jobs SET state='queued', worker='', lease_until=0, attempts=GREATEST(attempts-1, 0) "
        "WHERE id=$1 AND worker=$2 AND state='claimed'",
        job_id, worker);
    return {};
  });
}

Result<JobRow> PgRunDb::job(int64_t id) {
  return s_->run("get job", [&](pqxx::transaction_base& tx) -> Result<JobRow> {
    auto res = tx.exec_params(fmt::format("SELECT {} FROM jobs WHERE id=$1", kJobColumns), id);
    if (res.empty()) return fail("run database {}: no job {}", s_->shown(), id);
    return read_job(res[0]);
  });
}

Result<std::vector<JobRow>> PgRunDb::jobs(int64_t run_id, int64_t after_id, std::optional<JobState> state) {
  return s_->run("list jobs", [&](pqxx::transaction_base& tx) -> Result<std::vector<JobRow>> {
    auto res = tx.exec_params(
        fmt::format("SELECT {} FROM jobs WHERE run_id=$1 AND id>$2 AND ($3 = '' OR state = $3) ORDER BY id",
                    kJobColumns),
        run_id, after_id, std::string(state ? to_string(*state) : ""));
    std::vector<JobRow> out;
    out.reserve(res.size());
    for (const auto& row : res) out.push_back(read_job(row));
    return out;
  });
}

Result<std::string> PgRunDb::put_blob(const std::string& bytes) {
  std::string sha = sha256_hex(bytes);
  KEVO_TRY(s_->run("put blob", [&](pqxx::transaction_base& tx) -> Status {
    tx.exec_params("INSERT INTO blobs (sha256, bytes) VALUES ($1, $2) ON CONFLICT (sha256) DO NOTHING", sha,
                   pqxx::binarystring(bytes.data(), bytes.size()));
    return {};
  }));
  return sha;
}

Result<std::optional<std::string>> PgRunDb::blob(const std::string& sha256) {
  return s_->run("get blob", [&](pqxx::transaction_base& tx) -> Result<std::optional<std::string>> {
    auto res = tx.exec_params("SELECT bytes FROM blobs WHERE sha256=$1", sha256);
    if (res.empty()) return std::optional<std::string>();
    return std::optional<std::string>(pqxx::binarystring(res[0][0]).str());
  });
}

}  // namespace kevo::store
