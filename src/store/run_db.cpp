#include "store/run_db.h"

#include <sqlite3.h>

#include "store/sqlite_util.h"

#include <chrono>
#include <nlohmann/json.hpp>

namespace kevo::store {

namespace {

using detail::Binder;
using detail::db_error;
using detail::Stmt;
using detail::text;

std::string ids_json(const std::vector<int64_t>& v) { return nlohmann::json(v).dump(); }
std::vector<int64_t> ids_from(const std::string& s) {
  auto j = nlohmann::json::parse(s, nullptr, false);
  std::vector<int64_t> out;
  if (j.is_array())
    for (const auto& x : j)
      if (x.is_number_integer()) out.push_back(x.get<int64_t>());
  return out;
}

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

RunDb::~RunDb() { sqlite3_close(db_); }

Status RunDb::exec(const char* sql) {
  if (sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) != SQLITE_OK)
    return db_error(db_, path_.string(), std::string_view(sql).substr(0, std::string_view(sql).find_first_of(" ;")));
  return {};
}

Result<int64_t> RunDb::create_run(RunRow r) {
  std::lock_guard lock(mu_);
  Stmt st;
  if (sqlite3_prepare_v2(db_,
                         "INSERT INTO runs (created_at, updated_at, task, task_dir, strategy, config, "
                         "status, stop_reason, best_candidate, best_speedup, baseline, final, note) "
                         "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                         -1, &st.s, nullptr) != SQLITE_OK)
    return db_error(db_, path_.string(), "prepare insert run");
  double now = unix_now();
  Binder{st.s}(now)(now)(r.task)(r.task_dir)(r.strategy)(r.config_json)(std::string(to_string(r.status)))(
      r.stop_reason)(r.best_candidate)(r.best_speedup)(r.baseline_json)(r.final_json)(r.note);
  if (sqlite3_step(st.s) != SQLITE_DONE) return db_error(db_, path_.string(), "insert run");
  return static_cast<int64_t>(sqlite3_last_insert_rowid(db_));
}

Status RunDb::update_run(const RunRow& r) {
  std::lock_guard lock(mu_);
  Stmt st;
  if (sqlite3_prepare_v2(db_,
                         "UPDATE runs SET updated_at=?, status=?, stop_reason=?, best_candidate=?, "
                         "best_speedup=?, baseline=?, final=?, note=?, config=? WHERE id=?",
                         -1, &st.s, nullptr) != SQLITE_OK)
    return db_error(db_, path_.string(), "prepare update run");
  Binder{st.s}(unix_now())(std::string(to_string(r.status)))(r.stop_reason)(r.best_candidate)(
      r.best_speedup)(r.baseline_json)(r.final_json)(r.note)(r.config_json)(r.id);
  if (sqlite3_step(st.s) != SQLITE_DONE) return db_error(db_, path_.string(), "update run");
  return {};
}

Result<RunRow> RunDb::get_run(int64_t id) {
  std::lock_guard lock(mu_);
  Stmt st;
  auto sql = fmt::format("SELECT {} FROM runs WHERE id=?", kRunColumns);
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st.s, nullptr) != SQLITE_OK)
    return db_error(db_, path_.string(), "prepare get run");
  Binder{st.s}(id);
  int rc = sqlite3_step(st.s);
  if (rc == SQLITE_DONE) return fail("run database {}: no run {} (kevo runs lists them)", path_.string(), id);
  if (rc != SQLITE_ROW) return db_error(db_, path_.string(), "get run");
  return read_run(st.s);
}

Result<std::vector<RunRow>> RunDb::list_runs() {
  std::lock_guard lock(mu_);
  Stmt st;
  auto sql = fmt::format("SELECT {} FROM runs ORDER BY id", kRunColumns);
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st.s, nullptr) != SQLITE_OK)
    return db_error(db_, path_.string(), "prepare list runs");
  std::vector<RunRow> out;
  int rc;
  while ((rc = sqlite3_step(st.s)) == SQLITE_ROW) out.push_back(read_run(st.s));
  if (rc != SQLITE_DONE) return db_error(db_, path_.string(), "list runs");
  return out;
}

Status RunDb::record_resume(const RunRow& b) {
  std::lock_guard lock(mu_);
  Stmt st;
  if (sqlite3_prepare_v2(db_,
                         "INSERT INTO run_resumes (run_id, t, status, stop_reason, config, best_candidate, "
                         "best_speedup, final, note, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
                         -1, &st.s, nullptr) != SQLITE_OK)
    return db_error(db_, path_.string(), "prepare record resume");
  Binder{st.s}(b.id)(unix_now())(std::string(to_string(b.status)))(b.stop_reason)(b.config_json)(b.best_candidate)(
      b.best_speedup)(b.final_json)(b.note)(b.updated_at);
  if (sqlite3_step(st.s) != SQLITE_DONE) return db_error(db_, path_.string(), "record resume");
  return {};
}

Result<std::vector<RunRow>> RunDb::resumes(int64_t run_id) {
  auto base = get_run(run_id);
  if (!base) return base.unexpected();
  std::lock_guard lock(mu_);
  Stmt st;
  if (sqlite3_prepare_v2(db_,
                         "SELECT status, stop_reason, config, best_candidate, best_speedup, final, note, "
                         "updated_at FROM run_resumes WHERE run_id=? ORDER BY id",
                         -1, &st.s, nullptr) != SQLITE_OK)
    return db_error(db_, path_.string(), "prepare list resumes");
  Binder{st.s}(run_id);
  std::vector<RunRow> out;
  int rc;
  while ((rc = sqlite3_step(st.s)) == SQLITE_ROW) {
    RunRow r = *base;
    r.status = parse_run_status(text(st.s, 0));
    r.stop_reason = text(st.s, 1);
    r.config_json = text(st.s, 2);
    r.best_candidate = sqlite3_column_int64(st.s, 3);
    r.best_speedup = sqlite3_column_double(st.s, 4);
    r.final_json = text(st.s, 5);
    r.note = text(st.s, 6);
    r.updated_at = sqlite3_column_double(st.s, 7);
    out.push_back(std::move(r));
  }
  if (rc != SQLITE_DONE) return db_error(db_, path_.string(), "list resumes");
  return out;
}

namespace {
Status insert_call(sqlite3* db, const std::string& path, LlmCallRow& c) {
  Stmt st;
  if (sqlite3_prepare_v2(db,
                         "INSERT INTO llm_calls (run_id, candidate_id, model, purpose, input_tokens, "
                         "output_tokens, cost_usd, latency_s, from_cache, error, created_at) "
                         "VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                         -1, &st.s, nullptr) != SQLITE_OK)
    return db_error(db, path, "prepare insert llm call");
  Binder{st.s}(c.run_id)(c.candidate_id)(c.model)(c.purpose)(c.input_tokens)(c.output_tokens)(
      c.cost_usd)(c.latency_s)(c.from_cache)(c.error)(c.created_at ? c.created_at : unix_now());
  if (sqlite3_step(st.s) != SQLITE_DONE) return db_error(db, path, "insert llm call");
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
      return db_error(db_, path_.string(), "prepare insert candidate");
    if (c.created_at == 0) c.created_at = unix_now();
    Binder{st.s}(c.run_id)(c.seq)(c.generation)(c.island)(c.repair_round)(c.op)(ids_json(c.parents))(
        c.model)(c.prompt)(c.answer)(c.name)(c.rationale)(c.source)(c.outcome)(c.reason)(c.message)(
        c.compile_json)(c.verdict_json)(c.features_json)(c.flags_json)(c.speedup)(c.speedup_lo)(
        c.speedup_hi)(c.time_ms)(c.accepted)(c.created_at);
    if (sqlite3_step(st.s) != SQLITE_DONE) return db_error(db_, path_.string(), "insert candidate");
    c.id = sqlite3_last_insert_rowid(db_);
    for (auto& call : calls) {
      call.run_id = c.run_id;
      call.candidate_id = c.id;
      KEVO_TRY(insert_call(db_, path_.string(), call));
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
  return insert_call(db_, path_.string(), c);
}

Result<std::vector<CandidateRow>> RunDb::candidates(int64_t run_id) {
  std::lock_guard lock(mu_);
  Stmt st;
  auto sql = fmt::format("SELECT {} FROM candidates WHERE run_id=? ORDER BY seq", kCandidateColumns);
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st.s, nullptr) != SQLITE_OK)
    return db_error(db_, path_.string(), "prepare list candidates");
  Binder{st.s}(run_id);
  std::vector<CandidateRow> out;
  int rc;
  while ((rc = sqlite3_step(st.s)) == SQLITE_ROW) out.push_back(read_candidate(st.s));
  if (rc != SQLITE_DONE) return db_error(db_, path_.string(), "list candidates");
  return out;
}

Result<CandidateRow> RunDb::candidate(int64_t id) {
  std::lock_guard lock(mu_);
  Stmt st;
  auto sql = fmt::format("SELECT {} FROM candidates WHERE id=?", kCandidateColumns);
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st.s, nullptr) != SQLITE_OK)
    return db_error(db_, path_.string(), "prepare get candidate");
  Binder{st.s}(id);
  int rc = sqlite3_step(st.s);
  if (rc == SQLITE_DONE) return fail("run database {}: no candidate {}", path_.string(), id);
  if (rc != SQLITE_ROW) return db_error(db_, path_.string(), "get candidate");
  return read_candidate(st.s);
}

Status RunDb::add_event(int64_t run_id, const std::string& kind, const std::string& data_json) {
  std::lock_guard lock(mu_);
  Stmt st;
  if (sqlite3_prepare_v2(db_, "INSERT INTO events (run_id, t, kind, data) VALUES (?,?,?,?)", -1,
                         &st.s, nullptr) != SQLITE_OK)
    return db_error(db_, path_.string(), "prepare insert event");
  Binder{st.s}(run_id)(unix_now())(kind)(data_json);
  if (sqlite3_step(st.s) != SQLITE_DONE) return db_error(db_, path_.string(), "insert event");
  return {};
}

Result<std::vector<EventRow>> RunDb::events(int64_t run_id) {
  std::lock_guard lock(mu_);
  Stmt st;
  if (sqlite3_prepare_v2(db_, "SELECT id, run_id, t, kind, data FROM events WHERE run_id=? ORDER BY id",
                         -1, &st.s, nullptr) != SQLITE_OK)
    return db_error(db_, path_.string(), "prepare list events");
  Binder{st.s}(run_id);
  std::vector<EventRow> out;
  int rc;
  while ((rc = sqlite3_step(st.s)) == SQLITE_ROW)
    out.push_back({sqlite3_column_int64(st.s, 0), sqlite3_column_int64(st.s, 1),
                   sqlite3_column_double(st.s, 2), text(st.s, 3), text(st.s, 4)});
  if (rc != SQLITE_DONE) return db_error(db_, path_.string(), "list events");
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
      return db_error(db_, path_.string(), "prepare totals");
    Binder{st.s}(run_id);
    if (sqlite3_step(st.s) != SQLITE_ROW) return db_error(db_, path_.string(), "totals");
    t.candidates = sqlite3_column_int64(st.s, 0);
    t.valid = sqlite3_column_int64(st.s, 1);
  }
  Stmt st;
  if (sqlite3_prepare_v2(db_,
                         "SELECT COUNT(*), COALESCE(SUM(input_tokens+output_tokens),0), "
                         "COALESCE(SUM(cost_usd),0) FROM llm_calls WHERE run_id=?",
                         -1, &st.s, nullptr) != SQLITE_OK)
    return db_error(db_, path_.string(), "prepare call totals");
  Binder{st.s}(run_id);
  if (sqlite3_step(st.s) != SQLITE_ROW) return db_error(db_, path_.string(), "call totals");
  t.llm_calls = sqlite3_column_int64(st.s, 0);
  t.tokens = sqlite3_column_int64(st.s, 1);
  t.cost_usd = sqlite3_column_double(st.s, 2);
  return t;
}

}  // namespace kevo::store
