// The PostgreSQL backend's runs, candidates, LLM calls and events (the queue: pg_queue.cpp).
#include "store/pg_run_db.h"

#include <nlohmann/json.hpp>

#include "store/pg_session.h"
#include "store/row_columns.h"

namespace kevo::store {

namespace {

using detail::ids_json;
using detail::kCandidateColumns;
using detail::kRunColumns;
using detail::str;

// A result row's columns in order.
struct PgCursor {
  const pqxx::row& row;
  int i = 0;
  int64_t int64() { return row[i++].as<int64_t>(); }
  int int32() { return row[i++].as<int>(); }
  double real() { return row[i++].as<double>(); }
  std::string text() { return str(row[i++]); }
  bool flag() { return row[i++].as<bool>(); }
};

CandidateRow read_candidate(const pqxx::row& row) { return detail::read_candidate_columns(PgCursor{row}); }

RunRow read_run(const pqxx::row& row) { return detail::read_run_columns(PgCursor{row}); }

template <class Read>
auto all_rows(const pqxx::result& res, Read read) -> std::vector<decltype(read(res[0]))> {
  std::vector<decltype(read(res[0]))> out;
  out.reserve(res.size());
  for (const auto& row : res) out.push_back(read(row));
  return out;
}

void insert_call(pqxx::transaction_base& tx, LlmCallRow& c) {
  c.id = tx.exec_params1(
               "INSERT INTO llm_calls (run_id, candidate_id, model, purpose, input_tokens, output_tokens, "
               "cost_usd, latency_s, from_cache, error, created_at) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11) "
               "RETURNING id",
               c.run_id, c.candidate_id, c.model, c.purpose, c.input_tokens, c.output_tokens, c.cost_usd,
               c.latency_s, c.from_cache, c.error, c.created_at ? c.created_at : unix_now())[0]
             .as<int64_t>();
}

}  // namespace

std::string redact_postgres_url(const std::string& url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string::npos) return url;
  const size_t start = scheme + 3;
  const size_t end = std::min(url.find_first_of("/?", start), url.size());
  std::string out = url.substr(0, start);
  const std::string authority = url.substr(start, end - start);
  const size_t at = authority.rfind('@');
  if (at != std::string::npos) {
    const std::string user = authority.substr(0, at);
    out += user.substr(0, user.find(':')) + authority.substr(at);
  } else {
    out += authority;
  }
  const size_t q = url.find('?', end);
  out += url.substr(end, q == std::string::npos ? std::string::npos : q - end);
  if (q == std::string::npos) return out;
  std::string query;
  for (size_t i = q + 1; i <= url.size();) {
    size_t amp = std::min(url.find('&', i), url.size());
    std::string part = url.substr(i, amp - i);
    if (!part.empty() && part.rfind("password=", 0) != 0) query += (query.empty() ? "" : "&") + part;
    i = amp + 1;
  }
  return query.empty() ? out : out + "?" + query;
}

PgRunDb::PgRunDb(std::unique_ptr<detail::PgSession> s, bool read_only) : s_(std::move(s)), read_only_(read_only) {}
PgRunDb::~PgRunDb() = default;

std::string PgRunDb::where() const { return s_->shown(); }

Result<int64_t> PgRunDb::create_run(RunRow r) {
  return s_->run("insert run", [&](pqxx::transaction_base& tx) -> Result<int64_t> {
    double now = unix_now();
    return tx.exec_params1(
                 "INSERT INTO runs (created_at, updated_at, task, task_dir, strategy, config, status, stop_reason, "
                 "best_candidate, best_speedup, baseline, final, note) "
                 "VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13) RETURNING id",
                 now, now, r.task, r.task_dir, r.strategy, r.config_json, std::string(to_string(r.status)),
                 r.stop_reason, r.best_candidate, r.best_speedup, r.baseline_json, r.final_json, r.note)[0]
        .as<int64_t>();
  });
}

Status PgRunDb::update_run(const RunRow& r) {
  return s_->run("update run", [&](pqxx::transaction_base& tx) -> Status {
    tx.exec_params(
        "UPDATE runs SET updated_at=$1, status=$2, stop_reason=$3, best_candidate=$4, best_speedup=$5, "
        "baseline=$6, final=$7, note=$8, config=$9 WHERE id=$10",
        unix_now(), std::string(to_string(r.status)), r.stop_reason, r.best_candidate, r.best_speedup,
        r.baseline_json, r.final_json, r.note, r.config_json, r.id);
    return {};
  });
}

Result<RunRow> PgRunDb::get_run(int64_t id) {
  return s_->run("get run", [&](pqxx::transaction_base& tx) -> Result<RunRow> {
    auto res = tx.exec_params(fmt::format("SELECT {} FROM runs WHERE id=$1", kRunColumns), id);
    if (res.empty()) return fail("run database {}: no run {} (kevo runs lists them)", s_->shown(), id);
    return read_run(res[0]);
  });
}

Result<std::vector<RunRow>> PgRunDb::list_runs() {
  return s_->run("list runs", [&](pqxx::transaction_base& tx) -> Result<std::vector<RunRow>> {
    return all_rows(tx.exec(fmt::format("SELECT {} FROM runs ORDER BY id", kRunColumns)), read_run);
  });
}

Status PgRunDb::record_resume(const RunRow& b) {
  return s_->run("record resume", [&](pqxx::transaction_base& tx) -> Status {
    tx.exec_params(
        "INSERT INTO run_resumes (run_id, t, status, stop_reason, config, best_candidate, best_speedup, final, "
        "note, updated_at) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10)",
        b.id, unix_now(), std::string(to_string(b.status)), b.stop_reason, b.config_json, b.best_candidate,
        b.best_speedup, b.final_json, b.note, b.updated_at);
    return {};
  });
}

Result<std::vector<RunRow>> PgRunDb::resumes(int64_t run_id) {
  return s_->run("list resumes", [&](pqxx::transaction_base& tx) -> Result<std::vector<RunRow>> {
    auto base = tx.exec_params(fmt::format("SELECT {} FROM runs WHERE id=$1", kRunColumns), run_id);
    if (base.empty()) return fail("run database {}: no run {} (kevo runs lists them)", s_->shown(), run_id);
    const RunRow run = read_run(base[0]);
    auto res = tx.exec_params(
        "SELECT status, stop_reason, config, best_candidate, best_speedup, final, note, updated_at "
        "FROM run_resumes WHERE run_id=$1 ORDER BY id",
        run_id);
    return all_rows(res, [&](const pqxx::row& row) {
      RunRow r = run;
      r.status = parse_run_status(str(row[0])).value_or(RunStatus::kRunning);
      r.stop_reason = str(row[1]);
      r.config_json = str(row[2]);
      r.best_candidate = row[3].as<int64_t>();
      r.best_speedup = row[4].as<double>();
      r.final_json = str(row[5]);
      r.note = str(row[6]);
      r.updated_at = row[7].as<double>();
      return r;
    });
  });
}

Status PgRunDb::add_candidate(CandidateRow& c, std::vector<LlmCallRow> calls) {
  CandidateRow row = c;  // c and calls change only once the transaction has committed
  if (row.created_at == 0) row.created_at = unix_now();
  KEVO_TRY(s_->run("insert candidate", [&](pqxx::transaction_base& tx) -> Status {
    row.id = tx.exec_params1(
                   fmt::format("INSERT INTO candidates ({}) VALUES (DEFAULT,$1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,"
                               "$13,$14,$15,$16,$17,$18,$19,$20,$21,$22,$23,$24,$25,$26) RETURNING id",
                               kCandidateColumns),
                   row.run_id, row.seq, row.generation, row.island, row.repair_round, row.op, ids_json(row.parents),
                   row.model, row.prompt, row.answer, row.name, row.rationale, row.source,
                   std::string(to_string(row.outcome)), row.reason,
                   row.message, row.compile_json, row.verdict_json, row.features_json, row.flags_json, row.speedup,
                   row.speedup_lo, row.speedup_hi, row.time_ms, row.accepted, row.created_at)[0]
                 .as<int64_t>();
    for (auto& call : calls) {
      call.run_id = row.run_id;
      call.candidate_id = row.id;
      insert_call(tx, call);
    }
    return {};
  }));
  c = std::move(row);
  return {};
}

Status PgRunDb::add_llm_call(LlmCallRow c) {
  return s_->run("insert llm call", [&](pqxx::transaction_base& tx) -> Status {
    insert_call(tx, c);
    return {};
  });
}

Result<std::vector<CandidateRow>> PgRunDb::candidates(int64_t run_id) {
  return s_->run("list candidates", [&](pqxx::transaction_base& tx) -> Result<std::vector<CandidateRow>> {
    auto sql = fmt::format("SELECT {} FROM candidates WHERE run_id=$1 ORDER BY seq", kCandidateColumns);
    return all_rows(tx.exec_params(sql, run_id), read_candidate);
  });
}

Result<CandidateRow> PgRunDb::candidate(int64_t id) {
  return s_->run("get candidate", [&](pqxx::transaction_base& tx) -> Result<CandidateRow> {
    auto res = tx.exec_params(fmt::format("SELECT {} FROM candidates WHERE id=$1", kCandidateColumns), id);
    if (res.empty()) return fail("run database {}: no candidate {}", s_->shown(), id);
    return read_candidate(res[0]);
  });
}

Status PgRunDb::add_event(int64_t run_id, const std::string& kind, const std::string& data_json) {
  return s_->run("insert event", [&](pqxx::transaction_base& tx) -> Status {
    tx.exec_params("INSERT INTO events (run_id, t, kind, data) VALUES ($1,$2,$3,$4)", run_id, unix_now(), kind,
                   data_json);
    return {};
  });
}

Result<std::vector<EventRow>> PgRunDb::events(int64_t run_id) {
  return s_->run("list events", [&](pqxx::transaction_base& tx) -> Result<std::vector<EventRow>> {
    auto res = tx.exec_params("SELECT id, run_id, t, kind, data FROM events WHERE run_id=$1 ORDER BY id", run_id);
    return all_rows(res, [](const pqxx::row& r) {
      return EventRow{r[0].as<int64_t>(), r[1].as<int64_t>(), r[2].as<double>(), str(r[3]), str(r[4])};
    });
  });
}

Result<RunTotals> PgRunDb::totals(int64_t run_id) {
  return s_->run("totals", [&](pqxx::transaction_base& tx) -> Result<RunTotals> {
    auto row = tx.exec_params1(
        "SELECT (SELECT COUNT(*) FROM candidates WHERE run_id=$1), "
        "(SELECT COUNT(*) FILTER (WHERE outcome='pass') FROM candidates WHERE run_id=$1), "
        "COUNT(*), COALESCE(SUM(input_tokens+output_tokens),0)::BIGINT, COALESCE(SUM(cost_usd),0) "
        "FROM llm_calls WHERE run_id=$1",
        run_id);
    RunTotals t;
    t.candidates = row[0].as<int64_t>();
    t.valid = row[1].as<int64_t>();
    t.llm_calls = row[2].as<int64_t>();
    t.tokens = row[3].as<int64_t>();
    t.cost_usd = row[4].as<double>();
    return t;
  });
}

}  // namespace kevo::store
