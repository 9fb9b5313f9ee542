// The SQLite backend's runs, candidates, LLM calls and events (the queue: sqlite_queue.cpp).
#include "store/sqlite_run_db.h"

#include <nlohmann/json.hpp>

#include "store/row_columns.h"

namespace kevo::store {

namespace {

using detail::ids_json;
using detail::kCandidateColumns;
using detail::kRunColumns;
using detail::all_rows;
using detail::Binder;
using detail::Stmt;
using detail::text;

// A statement's current row's columns in order.
struct SqliteCursor {
  sqlite3_stmt* s;
  int i = 0;
  int64_t int64() { return sqlite3_column_int64(s, i++); }
  int int32() { return sqlite3_column_int(s, i++); }
  double real() { return sqlite3_column_double(s, i++); }
  std::string text() { return detail::text(s, i++); }
  bool flag() { return sqlite3_column_int(s, i++) != 0; }
};

CandidateRow read_candidate(sqlite3_stmt* s) { return detail::read_candidate_columns(SqliteCursor{s}); }

RunRow read_run(sqlite3_stmt* s) { return detail::read_run_columns(SqliteCursor{s}); }

}  // namespace

SqliteRunDb::~SqliteRunDb() { sqlite3_close(db_); }

Status SqliteRunDb::exec(const char* sql) {
  if (sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) != SQLITE_OK)
    return error(std::string_view(sql).substr(0, std::string_view(sql).find_first_of(" ;")));
  return {};
}

Status SqliteRunDb::prepare(Stmt& st, const std::string& sql, std::string_view what) {
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st.s, nullptr) != SQLITE_OK)
    return error(fmt::format("prepare {}", what));
  return {};
}

Status SqliteRunDb::step_done(Stmt& st, std::string_view what) {
  if (sqlite3_step(st.s) != SQLITE_DONE) return error(what);
  return {};
}

Status SqliteRunDb::transaction(const std::function<Status()>& body) {
  KEVO_TRY(exec("BEGIN IMMEDIATE"));
  Status s = body();
  if (s) s = exec("COMMIT");
  if (!s) (void)exec("ROLLBACK");
  return s;
}

Result<int64_t> SqliteRunDb::create_run(RunRow r) {
  std::lock_guard lock(mu_);
  Stmt st;
  KEVO_TRY(prepare(st,
                   "INSERT INTO runs (created_at, updated_at, task, task_dir, strategy, config, "
                   "status, stop_reason, best_candidate, best_speedup, baseline, final, note) "
                   "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                   "insert run"));
  double now = unix_now();
  Binder{st.s}(now)(now)(r.task)(r.task_dir)(r.strategy)(r.config_json)(std::string(to_string(r.status)))(
      r.stop_reason)(r.best_candidate)(r.best_speedup)(r.baseline_json)(r.final_json)(r.note);
  KEVO_TRY(step_done(st, "insert run"));
  return static_cast<int64_t>(sqlite3_last_insert_rowid(db_));
}

Status SqliteRunDb::update_run(const RunRow& r) {
  std::lock_guard lock(mu_);
  Stmt st;
  KEVO_TRY(prepare(st,
                   "UPDATE runs SET updated_at=?, status=?, stop_reason=?, best_candidate=?, "
                   "best_speedup=?, baseline=?, final=?, note=?, config=? WHERE id=?",
                   "update run"));
  Binder{st.s}(unix_now())(std::string(to_string(r.status)))(r.stop_reason)(r.best_candidate)(
      r.best_speedup)(r.baseline_json)(r.final_json)(r.note)(r.config_json)(r.id);
  return step_done(st, "update run");
}

Result<RunRow> SqliteRunDb::get_run(int64_t id) {
  std::lock_guard lock(mu_);
  Stmt st;
  KEVO_TRY(prepare(st, fmt::format("SELECT {} FROM runs WHERE id=?", kRunColumns), "get run"));
  Binder{st.s}(id);
  int rc = sqlite3_step(st.s);
  if (rc == SQLITE_DONE) return fail("run database {}: no run {} (kevo runs lists them)", path_.string(), id);
  if (rc != SQLITE_ROW) return error("get run");
  return read_run(st.s);
}

Result<std::vector<RunRow>> SqliteRunDb::list_runs() {
  std::lock_guard lock(mu_);
  Stmt st;
  KEVO_TRY(prepare(st, fmt::format("SELECT {} FROM runs ORDER BY id", kRunColumns), "list runs"));
  return all_rows(db_, path_.string(), st, "list runs", read_run);
}

Status SqliteRunDb::record_resume(const RunRow& b) {
  std::lock_guard lock(mu_);
  Stmt st;
  KEVO_TRY(prepare(st,
                   "INSERT INTO run_resumes (run_id, t, status, stop_reason, config, best_candidate, "
                   "best_speedup, final, note, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
                   "record resume"));
  Binder{st.s}(b.id)(unix_now())(std::string(to_string(b.status)))(b.stop_reason)(b.config_json)(b.best_candidate)(
      b.best_speedup)(b.final_json)(b.note)(b.updated_at);
  return step_done(st, "record resume");
}

Result<std::vector<RunRow>> SqliteRunDb::resumes(int64_t run_id) {
  auto base = get_run(run_id);
  if (!base) return base.unexpected();
  std::lock_guard lock(mu_);
  Stmt st;
  KEVO_TRY(prepare(st,
                   "SELECT status, stop_reason, config, best_candidate, best_speedup, final, note, "
                   "updated_at FROM run_resumes WHERE run_id=? ORDER BY id",
                   "list resumes"));
  Binder{st.s}(run_id);
  return all_rows(db_, path_.string(), st, "list resumes", [&](sqlite3_stmt* s) {
    RunRow r = *base;
    r.status = parse_run_status(text(s, 0)).value_or(RunStatus::kRunning);
    r.stop_reason = text(s, 1);
    r.config_json = text(s, 2);
    r.best_candidate = sqlite3_column_int64(s, 3);
    r.best_speedup = sqlite3_column_double(s, 4);
    r.final_json = text(s, 5);
    r.note = text(s, 6);
    r.updated_at = sqlite3_column_double(s, 7);
    return r;
  });
}

Status SqliteRunDb::insert_call(LlmCallRow& c) {
  Stmt st;
  KEVO_TRY(prepare(st,
                   "INSERT INTO llm_calls (run_id, candidate_id, model, purpose, input_tokens, "
                   "output_tokens, cost_usd, latency_s, from_cache, error, created_at) "
                   "VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                   "insert llm call"));
  Binder{st.s}(c.run_id)(c.candidate_id)(c.model)(c.purpose)(c.input_tokens)(c.output_tokens)(
      c.cost_usd)(c.latency_s)(c.from_cache)(c.error)(c.created_at ? c.created_at : unix_now());
  KEVO_TRY(step_done(st, "insert llm call"));
  c.id = sqlite3_last_insert_rowid(db_);
  return {};
}

Status SqliteRunDb::add_candidate(CandidateRow& c, std::vector<LlmCallRow> calls) {
  std::lock_guard lock(mu_);
  return transaction([&]() -> Status {
    Stmt st;
    std::string marks;
    for (int i = 0; i < 26; ++i) marks += ",?";  // every column after id
    KEVO_TRY(prepare(st, fmt::format("INSERT INTO candidates ({}) VALUES (NULL{})", kCandidateColumns, marks),
                     "insert candidate"));
    if (c.created_at == 0) c.created_at = unix_now();
    Binder{st.s}(c.run_id)(c.seq)(c.generation)(c.island)(c.repair_round)(c.op)(ids_json(c.parents))(
        c.model)(c.prompt)(c.answer)(c.name)(c.rationale)(c.source)(std::string(to_string(c.outcome)))(
        c.reason)(c.message)(c.compile_json)(c.verdict_json)(c.features_json)(c.flags_json)(c.speedup)(c.speedup_lo)(
        c.speedup_hi)(c.time_ms)(c.accepted)(c.created_at);
    KEVO_TRY(step_done(st, "insert candidate"));
    c.id = sqlite3_last_insert_rowid(db_);
    for (auto& call : calls) {
      call.run_id = c.run_id;
      call.candidate_id = c.id;
      KEVO_TRY(insert_call(call));
    }
    return {};
  });
}

Status SqliteRunDb::add_llm_call(LlmCallRow c) {
  std::lock_guard lock(mu_);
  return insert_call(c);
}

Result<std::vector<CandidateRow>> SqliteRunDb::candidates(int64_t run_id) {
  std::lock_guard lock(mu_);
  Stmt st;
  KEVO_TRY(prepare(st, fmt::format("SELECT {} FROM candidates WHERE run_id=? ORDER BY seq", kCandidateColumns),
                   "list candidates"));
  Binder{st.s}(run_id);
  return all_rows(db_, path_.string(), st, "list candidates", read_candidate);
}

Result<CandidateRow> SqliteRunDb::candidate(int64_t id) {
  std::lock_guard lock(mu_);
  Stmt st;
  KEVO_TRY(prepare(st, fmt::format("SELECT {} FROM candidates WHERE id=?", kCandidateColumns), "get candidate"));
  Binder{st.s}(id);
  int rc = sqlite3_step(st.s);
  if (rc == SQLITE_DONE) return fail("run database {}: no candidate {}", path_.string(), id);
  if (rc != SQLITE_ROW) return error("get candidate");
  return read_candidate(st.s);
}

Status SqliteRunDb::add_event(int64_t run_id, const std::string& kind, const std::string& data_json) {
  std::lock_guard lock(mu_);
  Stmt st;
  KEVO_TRY(prepare(st, "INSERT INTO events (run_id, t, kind, data) VALUES (?,?,?,?)", "insert event"));
  Binder{st.s}(run_id)(unix_now())(kind)(data_json);
  return step_done(st, "insert event");
}

Result<std::vector<EventRow>> SqliteRunDb::events(int64_t run_id) {
  std::lock_guard lock(mu_);
  Stmt st;
  KEVO_TRY(prepare(st, "SELECT id, run_id, t, kind, data FROM events WHERE run_id=? ORDER BY id", "list events"));
  Binder{st.s}(run_id);
  return all_rows(db_, path_.string(), st, "list events", [](sqlite3_stmt* s) {
    return EventRow{sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1), sqlite3_column_double(s, 2),
                    text(s, 3), text(s, 4)};
  });
}

Result<RunTotals> SqliteRunDb::totals(int64_t run_id) {
  std::lock_guard lock(mu_);
  RunTotals t;
  Stmt st;
  KEVO_TRY(prepare(st,
                   "SELECT (SELECT COUNT(*) FROM candidates WHERE run_id=?1), "
                   "(SELECT COALESCE(SUM(outcome='pass'),0) FROM candidates WHERE run_id=?1), "
                   "COUNT(*), COALESCE(SUM(input_tokens+output_tokens),0), COALESCE(SUM(cost_usd),0) "
                   "FROM llm_calls WHERE run_id=?1",
                   "totals"));
  Binder{st.s}(run_id);
  if (sqlite3_step(st.s) != SQLITE_ROW) return error("totals");
  t.candidates = sqlite3_column_int64(st.s, 0);
  t.valid = sqlite3_column_int64(st.s, 1);
  t.llm_calls = sqlite3_column_int64(st.s, 2);
  t.tokens = sqlite3_column_int64(st.s, 3);
  t.cost_usd = sqlite3_column_double(st.s, 4);
  return t;
}

}  // namespace kevo::store
