// Opening a PostgreSQL run database: identity (kevo_meta, else the tables), read-only sessions
// that change nothing, and schema creation/upgrades by writers in one transaction under an
// advisory lock.
#include <map>
#include <set>

#include "store/pg_run_db.h"
#include "store/pg_session.h"

namespace kevo::store {

namespace {

using detail::str;

// kevo's tables in a PostgreSQL database (the LLM answer cache stays in a local file).
const std::set<std::string> kKevoTables = {"kevo_meta", "runs",        "candidates", "llm_calls",
                                           "events",    "run_resumes", "jobs",       "blobs",
                                           "archive"};

// Writers that open the same database at once take turns on this lock (transaction-scoped).
constexpr int64_t kMigrationLock = kApplicationId;

// Schema version 3 (the first PostgreSQL schema), created whole in an empty database.
constexpr const char* kSchemaV3 = R"sql(
CREATE TABLE IF NOT EXISTS kevo_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
  id BIGSERIAL PRIMARY KEY,
  created_at DOUBLE PRECISION NOT NULL, updated_at DOUBLE PRECISION NOT NULL,
  task TEXT NOT NULL, task_dir TEXT NOT NULL, strategy TEXT NOT NULL, config TEXT NOT NULL,
  status TEXT NOT NULL, stop_reason TEXT NOT NULL DEFAULT '',
  best_candidate BIGINT NOT NULL DEFAULT 0, best_speedup DOUBLE PRECISION NOT NULL DEFAULT 0,
  baseline TEXT NOT NULL DEFAULT '', final TEXT NOT NULL DEFAULT '', note TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS candidates (
  id BIGSERIAL PRIMARY KEY,
  run_id BIGINT NOT NULL REFERENCES runs(id), seq INTEGER NOT NULL,
  generation INTEGER NOT NULL, island INTEGER NOT NULL, repair_round INTEGER NOT NULL,
  operator TEXT NOT NULL, parents TEXT NOT NULL, model TEXT NOT NULL,
  prompt TEXT NOT NULL, answer TEXT NOT NULL, name TEXT NOT NULL, rationale TEXT NOT NULL,
  source TEXT NOT NULL, outcome TEXT NOT NULL, reason TEXT NOT NULL, message TEXT NOT NULL,
  compile TEXT NOT NULL, verdict TEXT NOT NULL, features TEXT NOT NULL, flags TEXT NOT NULL,
  speedup DOUBLE PRECISION NOT NULL, speedup_lo DOUBLE PRECISION NOT NULL,
  speedup_hi DOUBLE PRECISION NOT NULL, time_ms DOUBLE PRECISION NOT NULL,
  accepted BOOLEAN NOT NULL, created_at DOUBLE PRECISION NOT NULL,
  UNIQUE (run_id, seq));
CREATE TABLE IF NOT EXISTS llm_calls (
  id BIGSERIAL PRIMARY KEY,
  run_id BIGINT NOT NULL REFERENCES runs(id), candidate_id BIGINT NOT NULL,
  model TEXT NOT NULL, purpose TEXT NOT NULL, input_tokens BIGINT NOT NULL,
  output_tokens BIGINT NOT NULL, cost_usd DOUBLE PRECISION NOT NULL, latency_s DOUBLE PRECISION NOT NULL,
  from_cache BOOLEAN NOT NULL, error TEXT NOT NULL, created_at DOUBLE PRECISION NOT NULL);
CREATE TABLE IF NOT EXISTS events (
  id BIGSERIAL PRIMARY KEY,
  run_id BIGINT NOT NULL REFERENCES runs(id), t DOUBLE PRECISION NOT NULL, kind TEXT NOT NULL,
  data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS run_resumes (
  id BIGSERIAL PRIMARY KEY,
  run_id BIGINT NOT NULL REFERENCES runs(id), t DOUBLE PRECISION NOT NULL,
  status TEXT NOT NULL, stop_reason TEXT NOT NULL, config TEXT NOT NULL, best_candidate BIGINT NOT NULL,
  best_speedup DOUBLE PRECISION NOT NULL, final TEXT NOT NULL, note TEXT NOT NULL,
  updated_at DOUBLE PRECISION NOT NULL);
CREATE TABLE IF NOT EXISTS jobs (
  id BIGSERIAL PRIMARY KEY,
  run_id BIGINT NOT NULL REFERENCES runs(id), seq BIGINT NOT NULL, payload TEXT NOT NULL,
  state TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, worker TEXT NOT NULL DEFAULT '',
  lease_until DOUBLE PRECISION NOT NULL DEFAULT 0, result TEXT NOT NULL DEFAULT '',
  created_at DOUBLE PRECISION NOT NULL, finished_at DOUBLE PRECISION NOT NULL DEFAULT 0,
  UNIQUE (run_id, seq));
CREATE TABLE IF NOT EXISTS blobs (sha256 TEXT PRIMARY KEY, bytes BYTEA NOT NULL);
CREATE INDEX IF NOT EXISTS candidates_run ON candidates(run_id, seq);
CREATE INDEX IF NOT EXISTS candidates_outcome ON candidates(run_id, outcome);
CREATE INDEX IF NOT EXISTS llm_calls_run ON llm_calls(run_id);
CREATE INDEX IF NOT EXISTS events_run ON events(run_id);
CREATE INDEX IF NOT EXISTS run_resumes_run ON run_resumes(run_id);
CREATE INDEX IF NOT EXISTS jobs_state ON jobs(state, id);
)sql";

// Version 4: the kernel archive (archive_row.h), kept across runs.
constexpr const char* kSchemaV4 = R"sql(
CREATE TABLE IF NOT EXISTS archive (
  id BIGSERIAL PRIMARY KEY, fingerprint TEXT NOT NULL UNIQUE, kind TEXT NOT NULL,
  task TEXT NOT NULL, gpu TEXT NOT NULL, arch TEXT NOT NULL, config TEXT NOT NULL, features TEXT NOT NULL,
  name TEXT NOT NULL, rationale TEXT NOT NULL, source TEXT NOT NULL, diff TEXT NOT NULL,
  run_id BIGINT NOT NULL, candidate_id BIGINT NOT NULL, parent_id BIGINT NOT NULL,
  speedup DOUBLE PRECISION NOT NULL, speedup_lo DOUBLE PRECISION NOT NULL, speedup_hi DOUBLE PRECISION NOT NULL,
  time_ms DOUBLE PRECISION NOT NULL, baseline_ms DOUBLE PRECISION NOT NULL, sol_before DOUBLE PRECISION NOT NULL,
  sol_after DOUBLE PRECISION NOT NULL, held_out TEXT NOT NULL, fake BOOLEAN NOT NULL, origin TEXT NOT NULL,
  created_at DOUBLE PRECISION NOT NULL);
CREATE INDEX IF NOT EXISTS archive_task ON archive(task);
)sql";

// The steps from one schema version to the next: those above the database's version run in order.
struct Step {
  int to;
  const char* sql;
};
const Step kSteps[] = {{3, kSchemaV3}, {4, kSchemaV4}};

// What the database says about itself.
struct Identity {
  std::vector<std::string> foreign;  // tables that are not kevo's
  bool has_meta = false;
  std::string application;  // kevo_meta's marker ("kevo")
  int version = 0;          // 0: no kevo schema yet
};

Identity read_identity(pqxx::transaction_base& tx) {
  Identity id;
  auto tables = tx.exec(
      "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
      "WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'v', 'm', 'f') ORDER BY 1");
  for (const auto& row : tables) {
    std::string t = str(row[0]);
    if (t == "kevo_meta") id.has_meta = true;
    if (!kKevoTables.count(t)) id.foreign.push_back(t);
  }
  if (!id.has_meta) return id;
  std::map<std::string, std::string> meta;
  for (const auto& row : tx.exec("SELECT key, value FROM kevo_meta")) meta[str(row[0])] = str(row[1]);
  id.application = meta["application"];
  id.version = meta.count("schema_version") ? std::atoi(meta["schema_version"].c_str()) : 0;
  return id;
}

// Whether this database may be opened as kevo's: the same rules as a SQLite file.
Status judge(const Identity& id, const std::string& shown, bool writing) {
  if (id.has_meta && id.application != "kevo")
    return fail("{} is not a kevo run database (its kevo_meta belongs to another application: {}); left untouched",
                shown, id.application.empty() ? "no marker" : id.application);
  if (!id.has_meta && !id.foreign.empty())
    return fail("{} is not a kevo run database (it holds other tables: {}{}); left untouched", shown,
                fmt::join(id.foreign.begin(), id.foreign.begin() + std::min<size_t>(id.foreign.size(), 5), ", "),
                id.foreign.size() > 5 ? ", ..." : "");
  if (!id.has_meta && !writing)
    return fail("{} is not a kevo run database (it holds no kevo tables; a command that writes, such as "
                "kevo evolve --db URL, creates them)",
                shown);
  if (writing && id.version > kSchemaVersion)
    return fail("run database {}: schema version {} is newer than this kevo understands ({}); "
                "use a newer kevo or another --db",
                shown, id.version, kSchemaVersion);
  return {};
}

}  // namespace

Result<std::unique_ptr<RunDb>> PgRunDb::open(const std::string& url, OpenMode mode) {
  const bool writing = mode == OpenMode::kWrite;
  auto session = std::make_unique<detail::PgSession>(url, !writing);
  KEVO_TRY(session->connect());
  std::unique_ptr<PgRunDb> db(new PgRunDb(std::move(session), !writing));
  KEVO_TRY(db->check_identity(writing));
  if (writing) KEVO_TRY(db->migrate());
  return std::unique_ptr<RunDb>(std::move(db));
}

Status PgRunDb::check_identity(bool writing) {
  return s_->run("read its identity", [&](pqxx::transaction_base& tx) -> Status {
    return judge(read_identity(tx), s_->shown(), writing);
  });
}

Status PgRunDb::migrate() {
  return s_->run("create or upgrade its schema", [&](pqxx::transaction_base& tx) -> Status {
    auto quick = read_identity(tx);
    if (quick.version == kSchemaVersion) return {};  // the usual case: no lock, no write
    tx.exec_params("SELECT pg_advisory_xact_lock($1)", kMigrationLock);
    auto id = read_identity(tx);  // again: another writer may have created it while we waited
    KEVO_TRY(judge(id, s_->shown(), true));
    if (id.version == kSchemaVersion) return {};
    for (const auto& step : kSteps)
      if (step.to > id.version) tx.exec(step.sql);
    tx.exec_params(
        "INSERT INTO kevo_meta (key, value) VALUES ('application', 'kevo'), ('schema_version', $1) "
        "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
        std::to_string(kSchemaVersion));
    return {};
  });
}

Result<int> PgRunDb::schema_version() {
  return s_->run("read its schema version", [&](pqxx::transaction_base& tx) -> Result<int> {
    return read_identity(tx).version;
  });
}

}  // namespace kevo::store
