// `kevo serve`'s application: one function from a request to a reply, with the rules every
// request passes first (GET and HEAD only, else 405; the Host check; the token when one is set),
// the routes of the pages, charts and JSON API (docs/SERVE.md), and the security headers on every
// reply. It reads the run database only through RunDb's read-only interface.
//
// Thread-safety: handle() may be called from many threads at once (the HTTP server's pool).
#pragma once

#include <string>
#include <vector>

#include "serve/auth.h"
#include "serve/http.h"
#include "serve/listen.h"
#include "serve/run_cache.h"

namespace kevo::serve {

struct AppOptions {
  ListenAddress listen;  // for the Host check
  std::string token;     // "" none
  double totals_max_age_s = kTotalsMaxAgeS;
};

class App {
 public:
  App(store::RunDb& db, AppOptions o) : cache_(db, o.totals_max_age_s), gate_(o.token), opts_(std::move(o)) {}
  Reply handle(const HttpRequest& req);
  // Reads every run once, so the first page is quick even for large runs (optional).
  void warm();

 private:
  Reply route(const HttpRequest& req);
  Reply run_route(const HttpRequest& req, int64_t run, const std::vector<std::string>& rest, bool api);
  Reply candidate_route(const HttpRequest& req, int64_t run, int64_t id, bool api);
  Reply lookup_failed(const HttpRequest& req, const Error& e, const std::string& what);

  RunCache cache_;
  TokenGate gate_;
  AppOptions opts_;
};

// Path segments of "/a/b/c" ("/" is none); a trailing slash is ignored.
std::vector<std::string> split_path(const std::string& path);
// A positive id of at most 18 digits; 0 when it is not one.
int64_t parse_id(const std::string& s);

}  // namespace kevo::serve
