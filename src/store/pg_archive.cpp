// The PostgreSQL backend's kernel archive (archive_row.h).
#include "store/pg_run_db.h"
#include "store/pg_session.h"
#include "store/row_columns.h"

namespace kevo::store {

namespace {

using detail::str;

struct ArchiveCursor {
  const pqxx::row& row;
  int i = 0;
  int64_t int64() { return row[i++].as<int64_t>(); }
  double real() { return row[i++].as<double>(); }
  std::string text() { return str(row[i++]); }
  bool flag() { return row[i++].as<bool>(); }
};

ArchiveRow read_entry(const pqxx::row& row) { return detail::read_archive_columns(ArchiveCursor{row}); }

std::string insert_sql() {
  std::string marks = "$1";
  for (int i = 2; i <= detail::kArchiveInsertCount; ++i) marks += fmt::format(",${}", i);
  return fmt::format("INSERT INTO archive ({}) VALUES ({}) ON CONFLICT (fingerprint) DO NOTHING RETURNING id",
                     detail::kArchiveInsertColumns, marks);
}

}  // namespace

Result<int> PgRunDb::add_archive(std::vector<ArchiveRow>& rows) {
  std::vector<int64_t> ids(rows.size(), 0);
  auto added = s_->run("insert archive entries", [&](pqxx::transaction_base& tx) -> Result<int> {
    const std::string sql = insert_sql();
    const double now = unix_now();
    int n = 0;
    for (size_t i = 0; i < rows.size(); ++i) {
      const ArchiveRow& r = rows[i];
      auto res = tx.exec_params(sql, r.fingerprint, std::string(to_string(r.kind)), r.task, r.gpu, r.arch, r.config,
                                r.features_json, r.name, r.rationale, r.source, r.diff, r.run_id, r.candidate_id,
                                r.parent_id, r.speedup, r.speedup_lo, r.speedup_hi, r.time_ms, r.baseline_ms,
                                r.sol_before, r.sol_after, std::string(to_string(r.held_out)), r.fake, r.origin,
                                r.created_at ? r.created_at : now);
      if (res.empty()) continue;  // archived already
      ids[i] = res[0][0].as<int64_t>();
      ++n;
    }
    return n;
  });
  if (!added) return added;
  for (size_t i = 0; i < rows.size(); ++i) rows[i].id = ids[i];  // only once committed
  return added;
}

Result<std::vector<ArchiveRow>> PgRunDb::archive(bool with_text) {
  return s_->run("list archive", [&](pqxx::transaction_base& tx) -> Result<std::vector<ArchiveRow>> {
    auto res = tx.exec(fmt::format("SELECT {} FROM archive ORDER BY id",
                                   with_text ? detail::kArchiveColumns : detail::kArchiveLightColumns));
    std::vector<ArchiveRow> out;
    out.reserve(res.size());
    for (const auto& row : res) out.push_back(read_entry(row));
    return out;
  });
}

Result<ArchiveRow> PgRunDb::archive_entry(int64_t id) {
  return s_->run("get archive entry", [&](pqxx::transaction_base& tx) -> Result<ArchiveRow> {
    auto res = tx.exec_params(fmt::format("SELECT {} FROM archive WHERE id=$1", detail::kArchiveColumns), id);
    if (res.empty()) return fail("run database {}: no archive entry {} (kevo archive list shows them)", s_->shown(), id);
    return read_entry(res[0]);
  });
}

}  // namespace kevo::store
