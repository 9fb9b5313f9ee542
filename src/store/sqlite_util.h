// Internal to store/: small helpers over the SQLite C API shared by the run database's files.
#pragma once

#include <sqlite3.h>

#include <string>
#include <string_view>

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

inline std::string text(sqlite3_stmt* s, int i) {
  auto p = reinterpret_cast<const char*>(sqlite3_column_text(s, i));
  return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(s, i))) : std::string();
}

}  // namespace kevo::store::detail
