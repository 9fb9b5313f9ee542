// The SQLite backend's kernel archive (archive_row.h).
#include "store/row_columns.h"
#include "store/sqlite_run_db.h"

namespace kevo::store {

namespace {

using detail::all_rows;
using detail::Binder;
using detail::Stmt;

struct ArchiveCursor {
  sqlite3_stmt* s;
  int i = 0;
  int64_t int64() { return sqlite3_column_int64(s, i++); }
  double real() { return sqlite3_column_double(s, i++); }
  std::string text() { return detail::text(s, i++); }
  bool flag() { return sqlite3_column_int(s, i++) != 0; }
};

ArchiveRow read_entry(sqlite3_stmt* s) { return detail::read_archive_columns(ArchiveCursor{s}); }

void bind_entry(sqlite3_stmt* s, const ArchiveRow& r) {
  Binder{s}(r.fingerprint)(std::string(to_string(r.kind)))(r.task)(r.gpu)(r.arch)(r.config)(r.features_json)(r.name)(
      r.rationale)(r.source)(r.diff)(r.run_id)(r.candidate_id)(r.parent_id)(r.speedup)(r.speedup_lo)(r.speedup_hi)(
      r.time_ms)(r.baseline_ms)(r.sol_before)(r.sol_after)(std::string(to_string(r.held_out)))(r.fake)(r.origin)(
      r.created_at);
}

}  // namespace

Result<int> SqliteRunDb::add_archive(std::vector<ArchiveRow>& rows) {
  std::lock_guard lock(mu_);
  int added = 0;
  std::vector<int64_t> ids(rows.size(), 0);
  KEVO_TRY(transaction([&]() -> Status {
    std::string marks = "?";
    for (int i = 1; i < detail::kArchiveInsertCount; ++i) marks += ",?";
    Stmt st;
    KEVO_TRY(prepare(st,
                     fmt::format("INSERT INTO archive ({}) VALUES ({}) ON CONFLICT (fingerprint) DO NOTHING",
                                 detail::kArchiveInsertColumns, marks),
                     "insert archive entry"));
    const double now = unix_now();
    for (size_t i = 0; i < rows.size(); ++i) {
      ArchiveRow r = rows[i];
      if (r.created_at == 0) r.created_at = now;
      sqlite3_reset(st.s);
      bind_entry(st.s, r);
      KEVO_TRY(step_done(st, "insert archive entry"));
      if (sqlite3_changes(db_) == 0) continue;  // archived already
      ids[i] = sqlite3_last_insert_rowid(db_);
      ++added;
    }
    return {};
  }));
  for (size_t i = 0; i < rows.size(); ++i) rows[i].id = ids[i];  // only once committed
  return added;
}

Result<std::vector<ArchiveRow>> SqliteRunDb::archive(bool with_text) {
  std::lock_guard lock(mu_);
  Stmt st;
  KEVO_TRY(prepare(st,
                   fmt::format("SELECT {} FROM archive ORDER BY id",
                               with_text ? detail::kArchiveColumns : detail::kArchiveLightColumns),
                   "list archive"));
  return all_rows(db_, path_.string(), st, "list archive", read_entry);
}

Result<ArchiveRow> SqliteRunDb::archive_entry(int64_t id) {
  std::lock_guard lock(mu_);
  Stmt st;
  KEVO_TRY(prepare(st, fmt::format("SELECT {} FROM archive WHERE id=?", detail::kArchiveColumns), "get archive entry"));
  Binder{st.s}(id);
  int rc = sqlite3_step(st.s);
  if (rc == SQLITE_DONE) return fail("run database {}: no archive entry {} (kevo archive list shows them)", path_.string(), id);
  if (rc != SQLITE_ROW) return error("get archive entry");
  return read_entry(st.s);
}

}  // namespace kevo::store
