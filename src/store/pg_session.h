// Internal to store/: the one libpqxx connection behind a PostgreSQL run database, and the one way
// to use it: run(what, body) executes body in a transaction while holding the session's mutex, so
// a PgRunDb may be called from several threads and each call stays whole.
//
// Errors: every libpqxx exception becomes an Error "run database URL: WHAT: the server's message"
// (the URL without its password). A connection the server dropped (restart, pg_terminate_backend,
// network) is closed and said so; the next call connects again, once, before it fails.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include <pqxx/pqxx>

#include "util/result.h"

namespace kevo::store::detail {

// Keeps the server's last notice instead of printing it: a server that ends the session sends why
// ("terminating connection due to administrator command") while the connection is idle, and libpq
// hands that to the notice handlers, not to the call that then finds the connection gone.
class LastNotice : public pqxx::errorhandler {
 public:
  explicit LastNotice(pqxx::connection_base& c) : pqxx::errorhandler(c) {}
  bool operator()(const char msg[]) noexcept override;
  std::string last;
};

class PgSession {
 public:
  PgSession(std::string url, bool read_only);
  ~PgSession();
  PgSession(const PgSession&) = delete;
  PgSession& operator=(const PgSession&) = delete;

  const std::string& shown() const { return shown_; }  // the URL without its password
  Status connect();

  // body(pqxx::transaction_base&) returns a Result; the transaction commits when it holds a value
  // and rolls back when it holds an error or throws.
  template <class F>
  auto run(std::string_view what, F&& body) -> decltype(body(std::declval<pqxx::transaction_base&>())) {
    std::lock_guard lock(mu_);
    if (!conn_) KEVO_TRY(connect_locked(true));
    notices_->last.clear();
    try {
      if (read_only_) return in<pqxx::read_transaction>(body);
      return in<pqxx::work>(body);
    } catch (const std::exception& e) {
      return failure(what, e);
    }
  }

 private:
  template <class Tx, class F>
  auto in(F& body) -> decltype(body(std::declval<pqxx::transaction_base&>())) {
    Tx tx(*conn_);
    auto r = body(static_cast<pqxx::transaction_base&>(tx));
    if (r) tx.commit();
    return r;
  }
  Status connect_locked(bool again);
  void drop();
  Error failure(std::string_view what, const std::exception& e);

  std::string url_, shown_;
  bool read_only_;
  std::mutex mu_;
  std::unique_ptr<pqxx::connection> conn_;
  std::unique_ptr<LastNotice> notices_;  // notices and warnings are kept, not printed
};

// A text column's value (NOT NULL columns; a NULL reads as "").
inline std::string str(const pqxx::field& f) { return std::string(f.c_str(), f.size()); }

}  // namespace kevo::store::detail
