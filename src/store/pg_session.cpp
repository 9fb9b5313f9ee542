#include "store/pg_session.h"

#include "store/pg_run_db.h"

namespace kevo::store::detail {

namespace {

// libpq's and the server's messages span lines ("ERROR:  ...\nDETAIL:  ..."): one line of them.
std::string one_line(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\t') c = ' ';
    if (c == '\n' || c == '\r') {
      if (!out.empty() && out.back() != ' ') out += "; ";
    } else if (c != ' ' || (!out.empty() && out.back() != ' ')) {
      out += c;
    }
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == ';')) out.pop_back();
  return out;
}

// True when the exception means the connection itself is gone: libpq reports it as a broken
// connection, or the server said so (SQLSTATE class 08: connection exception; 57P: the server is
// shutting down or an administrator ended the session).
bool connection_lost(const std::exception& e) {
  if (dynamic_cast<const pqxx::broken_connection*>(&e)) return true;
  if (auto* s = dynamic_cast<const pqxx::sql_error*>(&e)) {
    const std::string& st = s->sqlstate();
    return st.rfind("08", 0) == 0 || st.rfind("57P", 0) == 0;
  }
  return false;
}

}  // namespace

bool LastNotice::operator()(const char msg[]) noexcept {
  try {
    last = msg;
  } catch (...) {
  }
  return false;  // nor passed on to libpqxx's default handler, which prints
}

PgSession::PgSession(std::string url, bool read_only)
    : url_(std::move(url)), shown_(redact_postgres_url(url_)), read_only_(read_only) {}

PgSession::~PgSession() { drop(); }

void PgSession::drop() {
  notices_.reset();  // unregisters from the connection, so before it
  conn_.reset();
}

Status PgSession::connect() {
  std::lock_guard lock(mu_);
  return connect_locked(false);
}

Status PgSession::connect_locked(bool again) {
  drop();
  try {
    auto c = std::make_unique<pqxx::connection>(url_);
    auto q = std::make_unique<LastNotice>(*c);
    pqxx::nontransaction setup(*c);
    setup.exec(read_only_ ? "SET client_min_messages = warning; SET default_transaction_read_only = on"
                          : "SET client_min_messages = warning");
    setup.commit();
    conn_ = std::move(c);
    notices_ = std::move(q);
    return {};
  } catch (const std::exception& e) {
    return fail(ErrorCode::kUnavailable, "cannot {} the run database {}: {}", again ? "reconnect to" : "connect to",
                shown_, one_line(e.what()));
  }
}

Error PgSession::failure(std::string_view what, const std::exception& e) {
  std::string cause = one_line(e.what());
  if (notices_ && !notices_->last.empty()) cause = one_line(notices_->last) + "; " + cause;
  if (dynamic_cast<const pqxx::in_doubt_error*>(&e)) {
    drop();
    return Error{fmt::format("run database {}: {}: the connection was lost while committing, so the change "
                             "may or may not have been made ({})",
                             shown_, what, cause),
                 ErrorCode::kUnavailable};
  }
  if (connection_lost(e) || (conn_ && !conn_->is_open())) {
    drop();
    return Error{fmt::format("run database {}: {}: the connection to the server was lost ({}); the next call "
                             "connects again",
                             shown_, what, cause),
                 ErrorCode::kUnavailable};
  }
  return Error{fmt::format("run database {}: {}: {}", shown_, what, cause)};
}

}  // namespace kevo::store::detail
