// What both backends share: choosing one from `where`, the clock, the default work folder.
#include "store/run_db.h"

#include <chrono>

#include "store/pg_run_db.h"
#include "store/sqlite_run_db.h"
#include "util/fs.h"
#include "util/hash.h"

namespace kevo::store {

bool is_postgres_url(const std::string& where) {
  return where.rfind("postgresql://", 0) == 0 || where.rfind("postgres://", 0) == 0;
}

Result<std::unique_ptr<RunDb>> RunDb::open(const std::string& where, OpenMode mode) {
  if (is_postgres_url(where)) return PgRunDb::open(where, mode);
  return SqliteRunDb::open(where, mode);
}

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::filesystem::path default_work_dir(const RunDb& db) {
  const std::string where = db.where();
  if (!is_postgres_url(where)) return std::filesystem::path(where + ".work");
  return cache_dir() / "work" / ("pg-" + sha256_hex(where).substr(0, 12));
}

}  // namespace kevo::store
