// Internal to store/: small helpers over the SQLite C API shared by the SQLite backend's files.
#pragma once

#include <sqlite3.h>

#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace kevo::store::detail {

struct Stmt {
  sqlite3_stmt* s = nullptr;
  Stmt() = default;
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  ~Stmt() { sqlite3_finalize(s); }
};

// True when the last failure on `db` was the disk (or a file-size limit) running out of room.
bool out_of_space(sqlite3* db);

// "run database PATH: WHAT: sqlite's message", with what to do when the disk is full.
Error db_error(sqlite3* db, std::string_view path, std::string_view what);

// Bytes to bind as a BLOB rather than as text.
struct Bytes {
  const std::string& v;
};

// Binds in order: strings as text, Bytes as a blob, integers, doubles. Keeps the SQL readable.
struct Binder {
  sqlite3_stmt* s;
  int i = 1;
  Binder& operator()(const std::string& v) {
    sqlite3_bind_text(s, i++, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Binder& operator()(Bytes b) {
    sqlite3_bind_blob(s, i++, b.v.data(), static_cast<int>(b.v.size()), SQLITE_TRANSIENT);
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

inline std::string text(sqlite3_stmt* s, int i) {
  auto p = reinterpret_cast<const char*>(sqlite3_column_text(s, i));
  return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(s, i))) : std::string();
}

inline std::string blob(sqlite3_stmt* s, int i) {
  auto p = static_cast<const char*>(sqlite3_column_blob(s, i));
  return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(s, i))) : std::string();
}

// Steps `st` to its end, reading each row with read(st.s); an Error naming `what` if a step fails.
template <class Read>
auto all_rows(sqlite3* db, std::string_view path, Stmt& st, std::string_view what, Read read)
    -> Result<std::vector<decltype(read(st.s))>> {
  std::vector<decltype(read(st.s))> out;
  int rc;
  while ((rc = sqlite3_step(st.s)) == SQLITE_ROW) out.push_back(read(st.s));
  if (rc != SQLITE_DONE) return db_error(db, path, what);
  return out;
}

}  // namespace kevo::store::detail
