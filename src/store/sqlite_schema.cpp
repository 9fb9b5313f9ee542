// Opening the SQLite run database: identity (is this kevo's file?), read-only opens that write
// nothing, and schema upgrades by writers only, after a backup copy of the file.
#include <set>

#include "store/sqlite_run_db.h"

namespace kevo::store {

using detail::Binder;
using detail::db_error;
using detail::Stmt;

namespace {

// Readers and writers wait this long for a lock before giving up (a writer holds it for one
// candidate's transaction or one claim: milliseconds).
constexpr int kBusyTimeoutMs = 30000;

// Every table a kevo version has created in a run database (llm_cache: the LLM answer cache).
const std::set<std::string> kKevoTables = {"runs",        "candidates", "llm_calls", "events",
                                           "run_resumes", "llm_cache",  "jobs",      "blobs",
                                           "archive"};

// The whole schema; every statement is idempotent, so an older file gains what it lacks.
constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  created_at REAL NOT NULL, updated_at REAL NOT NULL,
  task TEXT NOT NULL, task_dir TEXT NOT NULL, strategy TEXT NOT NULL, config TEXT NOT NULL,
  status TEXT NOT NULL, stop_reason TEXT NOT NULL DEFAULT '',
  best_candidate INTEGER NOT NULL DEFAULT 0, best_speedup REAL NOT NULL DEFAULT 0,
  baseline TEXT NOT NULL DEFAULT '', final TEXT NOT NULL DEFAULT '', note TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS candidates (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id INTEGER NOT NULL REFERENCES runs(id), seq INTEGER NOT NULL,
  generation INTEGER NOT NULL, island INTEGER NOT NULL, repair_round INTEGER NOT NULL,
  operator TEXT NOT NULL, parents TEXT NOT NULL, model TEXT NOT NULL,
  prompt TEXT NOT NULL, answer TEXT NOT NULL, name TEXT NOT NULL, rationale TEXT NOT NULL,
  source TEXT NOT NULL, outcome TEXT NOT NULL, reason TEXT NOT NULL, message TEXT NOT NULL,
  compile TEXT NOT NULL, verdict TEXT NOT NULL, features TEXT NOT NULL, flags TEXT NOT NULL,
  speedup REAL NOT NULL, speedup_lo REAL NOT NULL, speedup_hi REAL NOT NULL, time_ms REAL NOT NULL,
  accepted INTEGER NOT NULL, created_at REAL NOT NULL,
  UNIQUE (run_id, seq));
CREATE TABLE IF NOT EXISTS llm_calls (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id INTEGER NOT NULL REFERENCES runs(id), candidate_id INTEGER NOT NULL,
  model TEXT NOT NULL, purpose TEXT NOT NULL, input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL, cost_usd REAL NOT NULL, latency_s REAL NOT NULL,
  from_cache INTEGER NOT NULL, error TEXT NOT NULL, created_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id INTEGER NOT NULL REFERENCES runs(id), t REAL NOT NULL, kind TEXT NOT NULL,
  data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS run_resumes (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id INTEGER NOT NULL REFERENCES runs(id), t REAL NOT NULL,
  status TEXT NOT NULL, stop_reason TEXT NOT NULL, config TEXT NOT NULL, best_candidate INTEGER NOT NULL,
  best_speedup REAL NOT NULL, final TEXT NOT NULL, note TEXT NOT NULL, updated_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS jobs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id INTEGER NOT NULL REFERENCES runs(id), seq INTEGER NOT NULL, payload TEXT NOT NULL,
  state TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, worker TEXT NOT NULL DEFAULT '',
  lease_until REAL NOT NULL DEFAULT 0, result TEXT NOT NULL DEFAULT '', created_at REAL NOT NULL,
  finished_at REAL NOT NULL DEFAULT 0,
  UNIQUE (run_id, seq));
CREATE TABLE IF NOT EXISTS blobs (sha256 TEXT PRIMARY KEY, bytes BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS archive (
  id INTEGER PRIMARY KEY AUTOINCREMENT, fingerprint TEXT NOT NULL UNIQUE, kind TEXT NOT NULL,
  task TEXT NOT NULL, gpu TEXT NOT NULL, arch TEXT NOT NULL, config TEXT NOT NULL, features TEXT NOT NULL,
  name TEXT NOT NULL, rationale TEXT NOT NULL, source TEXT NOT NULL, diff TEXT NOT NULL,
  run_id INTEGER NOT NULL, candidate_id INTEGER NOT NULL, parent_id INTEGER NOT NULL,
  speedup REAL NOT NULL, speedup_lo REAL NOT NULL, speedup_hi REAL NOT NULL, time_ms REAL NOT NULL,
  baseline_ms REAL NOT NULL, sol_before REAL NOT NULL, sol_after REAL NOT NULL, held_out TEXT NOT NULL,
  fake INTEGER NOT NULL, origin TEXT NOT NULL, created_at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS archive_task ON archive(task);
CREATE INDEX IF NOT EXISTS candidates_run ON candidates(run_id, seq);
CREATE INDEX IF NOT EXISTS candidates_outcome ON candidates(run_id, outcome);
CREATE INDEX IF NOT EXISTS llm_calls_run ON llm_calls(run_id);
CREATE INDEX IF NOT EXISTS events_run ON events(run_id);
CREATE INDEX IF NOT EXISTS run_resumes_run ON run_resumes(run_id);
CREATE INDEX IF NOT EXISTS jobs_state ON jobs(state, id);
)sql";

Result<int64_t> pragma_int(sqlite3* db, const std::string& path, const char* sql) {
  Stmt st;
  if (sqlite3_prepare_v2(db, sql, -1, &st.s, nullptr) != SQLITE_OK || sqlite3_step(st.s) != SQLITE_ROW)
    return db_error(db, path, "cannot read its header");
  return static_cast<int64_t>(sqlite3_column_int64(st.s, 0));
}

Result<std::vector<std::string>> table_names(sqlite3* db, const std::string& path) {
  Stmt st;
  if (sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'", -1,
                         &st.s, nullptr) != SQLITE_OK)
    return db_error(db, path, "cannot list its tables");
  return detail::all_rows(db, path, st, "cannot list its tables", [](sqlite3_stmt* s) { return detail::text(s, 0); });
}

// "file:" URI of a path (percent-encoding what a URI would read as syntax).
std::string file_uri(const std::string& path, const char* query) {
  std::string u = "file:";
  for (unsigned char c : path) {
    if (c == '%' || c == '?' || c == '#' || c < 0x20) u += fmt::format("%{:02X}", c);
    else u += static_cast<char>(c);
  }
  return u + query;
}

struct Conn {
  sqlite3* db = nullptr;
  ~Conn() { sqlite3_close(db); }
  sqlite3* release() { return std::exchange(db, nullptr); }
};

Status open_conn(Conn& c, const std::string& name, int flags, const std::string& path) {
  if (sqlite3_open_v2(name.c_str(), &c.db, flags | SQLITE_OPEN_FULLMUTEX, nullptr) != SQLITE_OK)
    return db_error(c.db, path, "cannot open it");
  sqlite3_busy_timeout(c.db, kBusyTimeoutMs);
  sqlite3_extended_result_codes(c.db, 1);
  return {};
}

// Fails unless a read-only open may go ahead: the file exists and is not a directory.
Status check_readable(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return fail("no such run database: {}", path.string());
  if (std::filesystem::is_directory(path, ec)) return fail("{} is a directory, not a run database", path.string());
  return {};
}

}  // namespace

Result<std::unique_ptr<RunDb>> SqliteRunDb::open(const std::filesystem::path& path, OpenMode mode) {
  std::error_code ec;
  const bool writing = mode == OpenMode::kWrite;
  const std::string p = path.string();
  if (!writing) KEVO_TRY(check_readable(path));
  else if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  Conn c;
  int flags = writing ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY;
  KEVO_TRY(open_conn(c, p, flags, p));
  std::unique_ptr<SqliteRunDb> r(new SqliteRunDb(c.db, path, !writing));
  c.release();
  Status id = r->check_identity(writing);
  if (!id && !writing) {
    // A WAL database on read-only storage: a reader cannot create the shared-memory file. Such a
    // file is an archive nobody writes, so SQLite may read it as immutable.
    int code = sqlite3_extended_errcode(r->db_) & 0xff;
    if (code == SQLITE_CANTOPEN || code == SQLITE_READONLY) {
      Conn ro;
      KEVO_TRY(open_conn(ro, file_uri(p, "?immutable=1"), SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, p));
      sqlite3_close(r->db_);
      r->db_ = ro.release();
      id = r->check_identity(writing);
    }
  }
  if (!id) return id.unexpected();
  if (writing) KEVO_TRY(r->migrate());
  return std::unique_ptr<RunDb>(std::move(r));
}

Status SqliteRunDb::check_identity(bool writing) {
  const std::string p = path_.string();
  auto app = pragma_int(db_, p, "PRAGMA application_id");
  if (!app) return app.unexpected();
  if (*app == kApplicationId) return {};
  if (*app != 0)
    return fail("{} is not a kevo run database (it belongs to another application: application_id {:#x}); "
                "left untouched",
                p, *app);
  // Files from before kevo set application_id are recognised by their tables.
  auto tables = table_names(db_, p);
  if (!tables) return tables.unexpected();
  std::vector<std::string> foreign;
  bool has_runs = false;
  for (const auto& t : *tables) {
    if (!kKevoTables.count(t)) foreign.push_back(t);
    has_runs = has_runs || t == "runs";
  }
  if (!foreign.empty())
    return fail("{} is not a kevo run database (it holds other tables: {}{}); left untouched", p,
                fmt::join(foreign.begin(), foreign.begin() + std::min<size_t>(foreign.size(), 5), ", "),
                foreign.size() > 5 ? ", ..." : "");
  if (!writing && !has_runs) return fail("{} is not a kevo run database (it holds no runs)", p);
  return {};
}

Status SqliteRunDb::migrate() {
  std::lock_guard lock(mu_);
  const std::string p = path_.string();
  auto version = pragma_int(db_, p, "PRAGMA user_version");
  if (!version) return version.unexpected();
  if (*version > kSchemaVersion)
    return fail("run database {}: schema version {} is newer than this kevo understands ({}); "
                "use a newer kevo or another --db",
                p, *version, kSchemaVersion);
  // Per-connection settings: they write nothing to the file.
  KEVO_TRY(exec("PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;"));
  auto app = pragma_int(db_, p, "PRAGMA application_id");
  if (!app) return app.unexpected();
  if (*version == kSchemaVersion && *app == kApplicationId) return {};  // the usual case: no write
  // WAL: readers never block the writer; NORMAL sync in WAL mode keeps every committed
  // transaction across a process kill, which is the guarantee --resume needs. Set once, when the
  // file is created or upgraded; the mode is stored in the file.
  KEVO_TRY(exec("PRAGMA journal_mode=WAL"));
  if (*version > 0) KEVO_TRY(back_up(static_cast<int>(*version)));
  return transaction([&]() -> Status {
    KEVO_TRY(exec(kSchema));
    return exec(fmt::format("PRAGMA application_id = {}; PRAGMA user_version = {}", kApplicationId,
                            kSchemaVersion).c_str());
  });
}

// Before an upgrade: a copy of the file as it was, so an older kevo can still read it.
Status SqliteRunDb::back_up(int version) {
  const std::string p = path_.string();
  auto dest = std::filesystem::path(p + fmt::format(".v{}.bak", version));
  std::error_code ec;
  if (std::filesystem::exists(dest, ec))
    dest = p + fmt::format(".v{}.{}.bak", version, static_cast<int64_t>(unix_now()));
  Stmt st;
  KEVO_TRY(prepare(st, "VACUUM INTO ?", "cannot prepare its backup"));
  Binder{st.s}(dest.string());
  if (sqlite3_step(st.s) != SQLITE_DONE)
    return error(fmt::format("cannot back it up to {} before upgrading its schema", dest.string()));
  backup_ = dest;
  return {};
}

Result<int> SqliteRunDb::schema_version() {
  std::lock_guard lock(mu_);
  auto v = pragma_int(db_, path_.string(), "PRAGMA user_version");
  if (!v) return v.unexpected();
  return static_cast<int>(*v);
}

}  // namespace kevo::store
