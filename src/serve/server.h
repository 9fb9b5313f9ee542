// `kevo serve`'s HTTP server: the app (app.h) behind cpp-httplib (Debian's libcpp-httplib), on a
// pool of threads, over a run database opened read-only. The only file that sees the HTTP
// library.
//
// Use: open() (database and bind rule), bind() (the port; 0 picks a free one), run() on a thread of
// its own until stop() from another.
#pragma once

#include <memory>
#include <string>

#include "serve/listen.h"
#include "util/result.h"

namespace kevo::serve {

struct ServeOptions {
  std::string db;          // a SQLite path or a postgresql:// URL
  ListenAddress listen;
  std::string token;       // "" none (then only loopback addresses are allowed)
  bool warm = true;        // read every run once in the background after bind()
  double totals_max_age_s = 1.0;  // run_cache.h's kTotalsMaxAgeS; 0: read on every request
};

class Server {
 public:
  // Refuses a non-loopback address without a token (listen.h) before touching the database.
  static Result<std::unique_ptr<Server>> open(const ServeOptions& o);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  Result<int> bind();      // the port it listens on
  void run();              // serves until stop(); returns then
  void stop();             // from any thread; run() returns soon after
  std::string url() const; // http://HOST:PORT/
  std::string where() const;  // the database, password removed

 private:
  struct Impl;
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kevo::serve
