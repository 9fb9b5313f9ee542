#include "store/run_db.h"

#include <sqlite3.h>

#include <chrono>
#include <nlohmann/json.hpp>

namespace kevo::store {

namespace {

struct Stmt {
  sqlite3_stmt* s = nullptr;
  ~Stmt() { sqlite3_finalize(s); }
};

Error db_error(sqlite3* db, std::string_view what) {
  return Error{fmt::format("run database: {}: {}", what, sqlite3_errmsg(db))};
}

// Binds in order: strings as text, integers, doubles. Keeps the SQL statements readable.
struct Binder {
  sqlite3_stmt* s;
  int i = 1;
  Binder& operator()(const std::string& v) {
    sqlite3_bind_text(s, i++, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Binder& operator()(int64_t v) {
    sqlite3_bind_int64(s, i++, v);
    return *this;
  }
  Binder& operator()(int v) { return (*this)(static_cast<int64_t>(v)); }
  Binder& operator()(bool v) { return (*this)(static_cast<int64_t>(v)); }
  Binder& operator()(double v) {
    sqlite3_bind_double(s, i++, v);
    return *this;
  }
};

std::string text(sqlite3_stmt* s, int i) {
  auto p = reinterpret_cast<const char*>(sqlite3_column_text(s, i));
  return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(s, i))) : std::string();
}

std::string ids_json(const std::vector<int64_t>& v) { return nlohmann::json(v).dump(); }
std::vector<int64_t> ids_from(const std::string& s) {
  auto j = nlohmann::json::parse(s, nullptr, false);
  std::vector<int64_t> out;
  if (j.is_array())
    for (const auto& x : j)
      if (x.is_number_integer()) out.push_back(x.get<int64_t>());
  return out;
}

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
CREATE INDEX IF NOT EXISTS candidates_run ON candidates(run_id, seq);
CREATE INDEX IF NOT EXISTS llm_calls_run ON llm_calls(run_id);
CREATE INDEX IF NOT EXISTS events_run ON events(run_id);
)sql";

constexpr const char* kCandidateColumns =
    "id, run_id, seq, generation, island, repair_round, operator, parents, model, prompt, answer, "
    "name, rationale, source, outcome, reason, message, compile, verdict, features, flags, "
    "speedup, speedup_lo, speedup_hi, time_ms, accepted, created_at";

CandidateRow read_candidate(sqlite3_stmt* s) {
  CandidateRow c;
  int i = 0;
  c.id = sqlite3_column_int64(s, i++);
  c.run_id = sqlite3_column_int64(s, i++);
  c.seq = sqlite3_column_int(s, i++);
  c.generation = sqlite3_column_int(s, i++);
  c.island = sqlite3_column_int(s, i++);
  c.repair_round = sqlite3_column_int(s, i++);
  c.op = text(s, i++);
  c.parents = ids_from(text(s, i++));
  c.model = text(s, i++);
  c.prompt = text(s, i++);
  c.answer = text(s, i++);
  c.name = text(s, i++);
  c.rationale = text(s, i++);
  c.source = text(s, i++);
  c.outcome = text(s, i++);
  c.reason = text(s, i++);
  c.message = text(s, i++);
  c.compile_json = text(s, i++);
  c.verdict_json = text(s, i++);
  c.features_json = text(s, i++);
  c.flags_json = text(s, i++);
  c.speedup = sqlite3_column_double(s, i++);
  c.speedup_lo = sqlite3_column_double(s, i++);
  c.speedup_hi = sqlite3_column_double(s, i++);
  c.time_ms = sqlite3_column_double(s, i++);
  c.accepted = sqlite3_column_int(s, i++) != 0;
  c.created_at = sqlite3_column_double(s, i++);
  return c;
}

constexpr const char* kRunColumns =
    "id, created_at, updated_at, task, task_dir, strategy, config, status, stop_reason, "
    "best_candidate, best_speedup, baseline, final, note";

RunRow read_run(sqlite3_stmt* s) {
  RunRow r;
  int i = 0;
  r.id = sqlite3_column_int64(s, i++);
  r.created_at = sqlite3_column_double(s, i++);
  r.updated_at = sqlite3_column_double(s, i++);
  r.task = text(s, i++);
  r.task_dir = text(s, i++);
  r.strategy = text(s, i++);
  r.config_json = text(s, i++);
  r.status = parse_run_status(text(s, i++));
  r.stop_reason = text(s, i++);
  r.best_candidate = sqlite3_column_int64(s, i++);
  r.best_speedup = sqlite3_column_double(s, i++);
  r.baseline_json = text(s, i++);
  r.final_json = text(s, i++);
  r.note = text(s, i++);
  return r;
}

}  // namespace

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

Result<std::unique_ptr<RunDb>> RunDb::open(const std::filesystem::path& path) {
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  sqlite3* db = nullptr;
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX;
  if (sqlite3_open_v2(path.c_str(), &db, flags, nullptr) != SQLITE_OK) {
    Error e = db_error(db, fmt::format("cannot open {}", path.string()));
    sqlite3_close(db);
    return e;
  }
  sqlite3_busy_timeout(db, 10000);
  std::unique_ptr<RunDb> r(new RunDb(db, path));
  // WAL: readers (kevo runs/show in another terminal) never block the writer; NORMAL sync in
  // WAL mode keeps every committed transaction across a process kill (only an OS crash can
  // lose the last ones), which is the guarantee --resume needs.
  KEVO_TRY(r->exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;"));
  KEVO_TRY(r->migrate());
  return r;
}

RunDb::~RunDb() { sqlite3_close(db_); }

Status RunDb::exec(const char* sql) {
  char* msg = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &msg) != SQLITE_OK) {
    Error e{fmt::format("run database {}: {}", path_.string(), msg ? msg : "error")};
    sqlite3_free(msg);
    return e;
  }
  return {};
}

Status RunDb::migrate() {
  std::lock_guard lock(mu_);
  Stmt st;
  if (sqlite3_prepare_v2(db_, "PRAGMA user_version", -1, &st.s, nullptr) != SQLITE_OK ||
      sqlite3_step(st.s) != SQLITE_ROW)
    return db_error(db_, "cannot read the schema version");
  int version = sqlite3_column_int(st.s, 0);
  if (version > kSchemaVersion)
    return fail("run database {}: schema version {} is newer than this kevo understands ({}); "
                "use a newer kevo or another --db",
                path_.string(), version, kSchemaVersion);
  // Version 0 is a new file (or one holding only the LLM cache): create everything.
  KEVO_TRY(exec("BEGIN IMMEDIATE"));
  Status s = exec(kSchema);
  if (s) s = exec(fmt::format("PRAGMA user_version = {}", kSchemaVersion).c_str());
  if (!s) {
    (void)exec("ROLLBACK");
    return s;
  }
  return exec("COMMIT");
}

Result<int64_t> RunDb::create_run(RunRow r) {
  std::lock_guard lock(mu_);
  Stmt st;
  if (sqlite3_prepare_v2(db_,
                         "INSERT INTO runs (created_at, updated_at, task, task_dir, strategy, config, "
                         "status, stop_reason, best_candidate, best_speedup, baseline, final, note) "
                         "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                         -1, &st.s, nullptr) != SQLITE_OK)
    return db_error(db_, "prepare insert run");
  double now = unix_now();
  Binder{st.s}(now)(now)(r.task)(r.task_dir)(r.strategy)(r.config_json)(std::string(to_string(r.status)))(
      r.stop_reason)(r.best_candidate)(r.best_speedup)(r.baseline_json)(r.final_json)(r.note);
  if (sqlite3_step(st.s) != SQLITE_DONE) return db_error(db_, "insert run");
  return static_cast<int64_t>(sqlite3_last_insert_rowid(db_));
}

Status RunDb::update_run(const RunRow& r) {
  std::lock_guard lock(mu_);
  Stmt st;
  if (sqlite3_prepare_v2(db_,
                         "UPDATE runs SET updated_at=?, status=?, stop_reason=?, best_candidate=?, "
                         "best_speedup=?, baseline=?, final=?, note=?, config=? WHERE id=?",
                         -1, &st.s, nullptr) != SQLITE_OK)
    return db_error(db_, "prepare update run");
  Binder{st.s}(unix_now())(std::string(to_string(r.status)))(r.stop_reason)(r.best_candidate)(
      r.best_speedup)(r.baseline_json)(r.final_json)(r.note)(r.config_json)(r.id);
  if (sqlite3_step(st.s) != SQLITE_DONE) return db_error(db_, "update run");
  return {};
}

Result<RunRow> RunDb::get_run(int64_t id) {
  std::lock_guard lock(mu_);
  Stmt st;
  auto sql = fmt::format("SELECT {} FROM runs WHERE id=?", kRunColumns);
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st.s, nullptr) != SQLITE_OK)
    return db_error(db_, "prepare get run");
  Binder{st.s}(id);
  if (sqlite3_step(st.s) != SQLITE_ROW)
    return fail("run database {}: no run {} (kevo runs lists them)", path_.string(), id);
  return read_run(st.s);
}

Result<std::vector<RunRow>> RunDb::list_runs() {
  std::lock_guard lock(mu_);
  Stmt st;
  auto sql = fmt::format("SELECT {} FROM runs ORDER BY id", kRunColumns);
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st.s, nullptr) != SQLITE_OK)
    return db_error(db_, "prepare list runs");
  std::vector<RunRow> out;
  while (sqlite3_step(st.s) == SQLITE_ROW) out.push_back(read_run(st.s));
  return out;
}

namespace {
Status insert_call(sqlite3* db, LlmCallRow& c) {
  Stmt st;
  if (sqlite3_prepare_v2(db,
                         "INSERT INTO llm_calls (run_id, candidate_id, model, purpose, input_tokens, "
                         "output_tokens, cost_usd, latency_s, from_cache, error, created_at) "
                         "VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                         -1, &st.s, nullptr) != SQLITE_OK)
    return db_error(db, "prepare insert llm call");
  Binder{st.s}(c.run_id)(c.candidate_id)(c.model)(c.purpose)(c.input_tokens)(c.output_tokens)(
      c.cost_usd)(c.latency_s)(c.from_cache)(c.error)(c.created_at ? c.created_at : unix_now());
  if (sqlite3_step(st.s) != SQLITE_DONE) return db_error(db, "insert llm call");
  c.id = sqlite3_last_insert_rowid(db);
  return {};
}
}  // namespace

Status RunDb::add_candidate(CandidateRow& c, std::vector<LlmCallRow> calls) {
  std::lock_guard lock(mu_);
  KEVO_TRY(exec("BEGIN IMMEDIATE"));
  auto body = [&]() -> Status {
    Stmt st;
    std::string marks;
    for (int i = 0; i < 26; ++i) marks += ",?";  // every column after id
    auto sql = fmt::format("INSERT INTO candidates ({}) VALUES (NULL{})", kCandidateColumns, marks);
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st.s, nullptr) != SQLITE_OK)
      return db_error(db_, "prepare insert candidate");
    if (c.created_at == 0) c.created_at = unix_now();
    Binder{st.s}(c.run_id)(c.seq)(c.generation)(c.island)(c.repair_round)(c.op)(ids_json(c.parents))(
        c.model)(c.prompt)(c.answer)(c.name)(c.rationale)(c.source)(c.outcome)(c.reason)(c.message)(
        c.compile_json)(c.verdict_json)(c.features_json)(c.flags_json)(c.speedup)(c.speedup_lo)(
        c.speedup_hi)(c.time_ms)(c.accepted)(c.created_at);
    if (sqlite3_step(st.s) != SQLITE_DONE) return db_error(db_, "insert candidate");
    c.id = sqlite3_last_insert_rowid(db_);
    for (auto& call : calls) {
      call.run_id = c.run_id;
      call.candidate_id = c.id;
      KEVO_TRY(insert_call(db_, call));
    }
    return {};
  };
  Status s = body();
  if (!s) {
    (void)exec("ROLLBACK");
    return s;
  }
  return exec("COMMIT");
}

Status RunDb::add_llm_call(LlmCallRow c) {
  std::lock_guard lock(mu_);
  return insert_call(db_, c);
}

Result<std::vector<CandidateRow>> RunDb::candidates(int64_t run_id) {
  std::lock_guard lock(mu_);
  Stmt st;
  auto sql = fmt::format("SELECT {} FROM candidates WHERE run_id=? ORDER BY seq", kCandidateColumns);
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st.s, nullptr) != SQLITE_OK)
    return db_error(db_, "prepare list candidates");
  Binder{st.s}(run_id);
  std::vector<CandidateRow> out;
  while (sqlite3_step(st.s) == SQLITE_ROW) out.push_back(read_candidate(st.s));
  return out;
}

Result<CandidateRow> RunDb::candidate(int64_t id) {
  std::lock_guard lock(mu_);
  Stmt st;
  auto sql = fmt::format("SELECT {} FROM candidates WHERE id=?", kCandidateColumns);
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st.s, nullptr) != SQLITE_OK)
    return db_error(db_, "prepare get candidate");
  Binder{st.s}(id);
  if (sqlite3_step(st.s) != SQLITE_ROW) return fail("run database: no candidate {}", id);
  return read_candidate(st.s);
}

Status RunDb::add_event(int64_t run_id, const std::string& kind, const std::string& data_json) {
  std::lock_guard lock(mu_);
  Stmt st;
  if (sqlite3_prepare_v2(db_, "INSERT INTO events (run_id, t, kind, data) VALUES (?,?,?,?)", -1,
                         &st.s, nullptr) != SQLITE_OK)
    return db_error(db_, "prepare insert event");
  Binder{st.s}(run_id)(unix_now())(kind)(data_json);
  if (sqlite3_step(st.s) != SQLITE_DONE) return db_error(db_, "insert event");
  return {};
}

Result<std::vector<EventRow>> RunDb::events(int64_t run_id) {
  std::lock_guard lock(mu_);
  Stmt st;
  if (sqlite3_prepare_v2(db_, "SELECT id, run_id, t, kind, data FROM events WHERE run_id=? ORDER BY id",
                         -1, &st.s, nullptr) != SQLITE_OK)
    return db_error(db_, "prepare list events");
  Binder{st.s}(run_id);
  std::vector<EventRow> out;
  while (sqlite3_step(st.s) == SQLITE_ROW)
    out.push_back({sqlite3_column_int64(st.s, 0), sqlite3_column_int64(st.s, 1),
                   sqlite3_column_double(st.s, 2), text(st.s, 3), text(st.s, 4)});
  return out;
}

Result<RunTotals> RunDb::totals(int64_t run_id) {
  std::lock_guard lock(mu_);
  RunTotals t;
  {
    Stmt st;
    if (sqlite3_prepare_v2(db_,
                           "SELECT COUNT(*), COALESCE(SUM(outcome='pass'),0) FROM candidates WHERE run_id=?",
                           -1, &st.s, nullptr) != SQLITE_OK)
      return db_error(db_, "prepare totals");
    Binder{st.s}(run_id);
    if (sqlite3_step(st.s) != SQLITE_ROW) return db_error(db_, "totals");
    t.candidates = sqlite3_column_int64(st.s, 0);
    t.valid = sqlite3_column_int64(st.s, 1);
  }
  Stmt st;
  if (sqlite3_prepare_v2(db_,
                         "SELECT COUNT(*), COALESCE(SUM(input_tokens+output_tokens),0), "
                         "COALESCE(SUM(cost_usd),0) FROM llm_calls WHERE run_id=?",
                         -1, &st.s, nullptr) != SQLITE_OK)
    return db_error(db_, "prepare call totals");
  Binder{st.s}(run_id);
  if (sqlite3_step(st.s) != SQLITE_ROW) return db_error(db_, "call totals");
  t.llm_calls = sqlite3_column_int64(st.s, 0);
  t.tokens = sqlite3_column_int64(st.s, 1);
  t.cost_usd = sqlite3_column_double(st.s, 2);
  return t;
}

}  // namespace kevo::store
