#include "llm/cache.h"

#include <sqlite3.h>

#include <ctime>
#include <filesystem>

#include "llm/errors.h"

namespace kevo::llm {

namespace {

struct Stmt {
  sqlite3_stmt* s = nullptr;
  ~Stmt() { sqlite3_finalize(s); }
};

Error db_error(sqlite3* db, std::string_view what) {
  return make_error(ErrorKind::kFatal, fmt::format("llm cache: {}: {}", what, sqlite3_errmsg(db)));
}

void bind_text(sqlite3_stmt* s, int i, const std::string& v) {
  sqlite3_bind_text(s, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
}

std::string column_text(sqlite3_stmt* s, int i) {
  auto p = reinterpret_cast<const char*>(sqlite3_column_text(s, i));
  return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(s, i))) : std::string();
}

}  // namespace

Result<std::unique_ptr<ResponseCache>> ResponseCache::open(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::path(path).has_parent_path())
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);  // open says why it fails
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK) {
    Error e = db_error(db, fmt::format("cannot open {}", path));
    sqlite3_close(db);
    return e;
  }
  sqlite3_busy_timeout(db, 5000);
  std::unique_ptr<ResponseCache> c(new ResponseCache(db, true));
  KEVO_TRY(c->init());
  return c;
}

Result<std::unique_ptr<ResponseCache>> ResponseCache::attach(sqlite3* db) {
  std::unique_ptr<ResponseCache> c(new ResponseCache(db, false));
  KEVO_TRY(c->init());
  return c;
}

ResponseCache::~ResponseCache() {
  if (owned_) sqlite3_close(db_);
}

Status ResponseCache::init() {
  const char* sql =
      "CREATE TABLE IF NOT EXISTS llm_cache ("
      " key TEXT NOT NULL, occurrence INTEGER NOT NULL, model TEXT NOT NULL,"
      " request TEXT NOT NULL, response TEXT NOT NULL, cost_usd REAL NOT NULL DEFAULT 0,"
      " created_at INTEGER NOT NULL, PRIMARY KEY (key, occurrence))";
  std::lock_guard lock(mu_);
  if (sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) != SQLITE_OK)
    return db_error(db_, "cannot create table llm_cache");
  return {};
}

int ResponseCache::next_occurrence(const std::string& key) {
  std::lock_guard lock(mu_);
  return occurrences_[key]++;
}

Result<std::optional<CacheEntry>> ResponseCache::get(const std::string& key, int occurrence) {
  std::lock_guard lock(mu_);
  Stmt st;
  if (sqlite3_prepare_v2(db_,
                         "SELECT model, request, response, cost_usd FROM llm_cache "
                         "WHERE key = ?1 AND occurrence = ?2",
                         -1, &st.s, nullptr) != SQLITE_OK)
    return db_error(db_, "lookup");
  bind_text(st.s, 1, key);
  sqlite3_bind_int(st.s, 2, occurrence);
  int rc = sqlite3_step(st.s);
  if (rc == SQLITE_DONE) return std::optional<CacheEntry>();
  if (rc != SQLITE_ROW) return db_error(db_, "lookup");
  CacheEntry e{column_text(st.s, 0), column_text(st.s, 1), column_text(st.s, 2),
               sqlite3_column_double(st.s, 3)};
  return std::optional<CacheEntry>(std::move(e));
}

Status ResponseCache::put(const std::string& key, int occurrence, const CacheEntry& e) {
  std::lock_guard lock(mu_);
  Stmt st;
  if (sqlite3_prepare_v2(db_,
                         "INSERT OR REPLACE INTO llm_cache (key, occurrence, model, request, "
                         "response, cost_usd, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                         -1, &st.s, nullptr) != SQLITE_OK)
    return db_error(db_, "store");
  bind_text(st.s, 1, key);
  sqlite3_bind_int(st.s, 2, occurrence);
  bind_text(st.s, 3, e.model);
  bind_text(st.s, 4, e.request_json);
  bind_text(st.s, 5, e.response_json);
  sqlite3_bind_double(st.s, 6, e.cost_usd);
  sqlite3_bind_int64(st.s, 7, static_cast<sqlite3_int64>(std::time(nullptr)));
  if (sqlite3_step(st.s) != SQLITE_DONE) return db_error(db_, "store");
  return {};
}

Result<int64_t> ResponseCache::size() {
  std::lock_guard lock(mu_);
  Stmt st;
  if (sqlite3_prepare_v2(db_, "SELECT COUNT(*) FROM llm_cache", -1, &st.s, nullptr) != SQLITE_OK ||
      sqlite3_step(st.s) != SQLITE_ROW)
    return db_error(db_, "count");
  return static_cast<int64_t>(sqlite3_column_int64(st.s, 0));
}

}  // namespace kevo::llm
