// The SQLite backend's evaluation queue and content-addressed blobs. A claim is one BEGIN IMMEDIATE
// transaction, so processes sharing the file on one host never claim the same job; times are this
// host's clock (unix_now).
#include "store/sqlite_run_db.h"
#include "util/hash.h"

namespace kevo::store {

namespace {

using detail::all_rows;
using detail::Binder;
using detail::Stmt;
using detail::text;

constexpr const char* kJobColumns =
    "id, run_id, seq, payload, state, attempts, worker, lease_until, result, created_at, finished_at";

JobRow read_job(sqlite3_stmt* s) {
  JobRow j;
  int i = 0;
  j.id = sqlite3_column_int64(s, i++);
  j.run_id = sqlite3_column_int64(s, i++);
  j.seq = sqlite3_column_int64(s, i++);
  j.payload_json = text(s, i++);
  j.state = parse_job_state(text(s, i++)).value_or(JobState::kQueued);
  j.attempts = sqlite3_column_int(s, i++);
  j.worker = text(s, i++);
  j.lease_until = sqlite3_column_double(s, i++);
  j.result_json = text(s, i++);
  j.created_at = sqlite3_column_double(s, i++);
  j.finished_at = sqlite3_column_double(s, i++);
  return j;
}

}  // namespace

Result<int64_t> SqliteRunDb::enqueue(int64_t run_id, int64_t seq, const std::string& payload_json) {
  std::lock_guard lock(mu_);
  Stmt ins, sel;
  KEVO_TRY(prepare(ins,
                   "INSERT INTO jobs (run_id, seq, payload, state, created_at) VALUES (?,?,?,'queued',?) "
                   "ON CONFLICT (run_id, seq) DO NOTHING",
                   "enqueue job"));
  Binder{ins.s}(run_id)(seq)(payload_json)(unix_now());
  KEVO_TRY(step_done(ins, "enqueue job"));
  KEVO_TRY(prepare(sel, "SELECT id FROM jobs WHERE run_id=? AND seq=?", "find job"));
  Binder{sel.s}(run_id)(seq);
  if (sqlite3_step(sel.s) != SQLITE_ROW) return error("find the enqueued job");
  return static_cast<int64_t>(sqlite3_column_int64(sel.s, 0));
}

Result<std::optional<JobRow>> SqliteRunDb::claim(const std::string& worker, double lease_s, int max_attempts,
                                                 int64_t run_id) {
  std::lock_guard lock(mu_);
  std::optional<JobRow> out;
  KEVO_TRY(transaction([&]() -> Status {
    const double now = unix_now();
    // Expired leases that used up their attempts are given up first, so they are never claimed.
    Stmt give_up;
    KEVO_TRY(prepare(give_up,
                     "UPDATE jobs SET state='failed', finished_at=?1, result='{\"error\":\"lease expired ' || "
                     "attempts || ' times (workers died or hung)\"}' WHERE state='claimed' AND lease_until < ?1 "
                     "AND attempts >= ?2 AND (?3 = 0 OR run_id = ?3)",
                     "give up expired jobs"));
    Binder{give_up.s}(now)(max_attempts)(run_id);
    KEVO_TRY(step_done(give_up, "give up expired jobs"));
    Stmt st;
    KEVO_TRY(prepare(st,
                     fmt::format("UPDATE jobs SET state='claimed', attempts=attempts+1, worker=?1, lease_until=?2 "
                                 "WHERE id = (SELECT id FROM jobs WHERE (state='queued' OR (state='claimed' AND "
                                 "lease_until < ?3 AND attempts < ?4)) AND (?5 = 0 OR run_id = ?5) ORDER BY id "
                                 "LIMIT 1) RETURNING {}",
                                 kJobColumns),
                     "claim job"));
    Binder{st.s}(worker)(now + lease_s)(now)(max_attempts)(run_id);
    int rc = sqlite3_step(st.s);
    if (rc == SQLITE_ROW) {
      out = read_job(st.s);
      rc = sqlite3_step(st.s);
    }
    if (rc != SQLITE_DONE) return error("claim job");
    return {};
  }));
  return out;
}

Result<bool> SqliteRunDb::heartbeat(int64_t job_id, const std::string& worker, double lease_s) {
  std::lock_guard lock(mu_);
  Stmt st;
  KEVO_TRY(prepare(st, "UPDATE jobs SET lease_until=? WHERE id=? AND worker=? AND state='claimed'", "renew lease"));
  Binder{st.s}(unix_now() + lease_s)(job_id)(worker);
  KEVO_TRY(step_done(st, "renew lease"));
  return sqlite3_changes(db_) == 1;
}

Result<bool> SqliteRunDb::job_exists(int64_t id) {
  Stmt st;
  KEVO_TRY(prepare(st, "SELECT 1 FROM jobs WHERE id=?", "find job"));
  Binder{st.s}(id);
  int rc = sqlite3_step(st.s);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) return error("find job");
  return rc == SQLITE_ROW;
}

Result<bool> SqliteRunDb::complete(int64_t job_id, const std::string& worker, const std::string& result_json) {
  std::lock_guard lock(mu_);
  Stmt st;
  // Done and failed are final: a result that comes after either changes nothing.
  KEVO_TRY(prepare(st,
                   "UPDATE jobs SET state='done', result=?, worker=?, finished_at=? "
                   "WHERE id=? AND state IN ('queued','claimed')",
                   "complete job"));
  Binder{st.s}(result_json)(worker)(unix_now())(job_id);
  KEVO_TRY(step_done(st, "complete job"));
  if (sqlite3_changes(db_) == 1) return true;
  auto exists = job_exists(job_id);
  if (!exists) return exists.unexpected();
  if (!*exists) return fail("run database {}: no job {}", path_.string(), job_id);
  return false;
}

Status SqliteRunDb::release(int64_t job_id, const std::string& worker) {
  std::lock_guard lock(mu_);
  Stmt st;
  KEVO_TRY(prepare(st,
                   "UPDATE jobs SET state='queued', worker='', lease_until=0, attempts=MAX(attempts-1, 0) "
                   "WHERE id=? AND worker=? AND state='claimed'",
                   "release job"));
  Binder{st.s}(job_id)(worker);
  return step_done(st, "release job");
}

Result<JobRow> SqliteRunDb::job(int64_t id) {
  std::lock_guard lock(mu_);
  Stmt st;
  KEVO_TRY(prepare(st, fmt::format("SELECT {} FROM jobs WHERE id=?", kJobColumns), "get job"));
  Binder{st.s}(id);
  int rc = sqlite3_step(st.s);
  if (rc == SQLITE_DONE) return fail("run database {}: no job {}", path_.string(), id);
  if (rc != SQLITE_ROW) return error("get job");
  return read_job(st.s);
}

Result<std::vector<JobRow>> SqliteRunDb::jobs(int64_t run_id, int64_t after_id, std::optional<JobState> state) {
  std::lock_guard lock(mu_);
  Stmt st;
  KEVO_TRY(prepare(st,
                   fmt::format("SELECT {} FROM jobs WHERE run_id=?1 AND id>?2 AND (?3 = '' OR state = ?3) ORDER BY id",
                               kJobColumns),
                   "list jobs"));
  Binder{st.s}(run_id)(after_id)(std::string(state ? to_string(*state) : ""));
  return all_rows(db_, path_.string(), st, "list jobs", read_job);
}

Result<std::string> SqliteRunDb::put_blob(const std::string& bytes) {
  std::lock_guard lock(mu_);
  std::string sha = sha256_hex(bytes);
  Stmt st;
  KEVO_TRY(prepare(st, "INSERT INTO blobs (sha256, bytes) VALUES (?,?) ON CONFLICT (sha256) DO NOTHING", "put blob"));
  Binder{st.s}(sha)(detail::Bytes{bytes});
  KEVO_TRY(step_done(st, "put blob"));
  return sha;
}

Result<std::optional<std::string>> SqliteRunDb::blob(const std::string& sha256) {
  std::lock_guard lock(mu_);
  Stmt st;
  KEVO_TRY(prepare(st, "SELECT bytes FROM blobs WHERE sha256=?", "get blob"));
  Binder{st.s}(sha256);
  int rc = sqlite3_step(st.s);
  if (rc == SQLITE_DONE) return std::optional<std::string>();
  if (rc != SQLITE_ROW) return error("get blob");
  return std::optional<std::string>(detail::blob(st.s, 0));
}

}  // namespace kevo::store
