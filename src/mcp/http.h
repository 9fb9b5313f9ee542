// The Streamable HTTP transport (MCP 2025-03-26 and later): one endpoint, /mcp. A client POSTs each
// message; a request is answered with one JSON body (this server sends no event streams and no
// requests of its own), a notification with 202. `initialize` opens a session (one ToolProvider,
// so one run) named by the Mcp-Session-Id reply header, which every later POST carries; DELETE
// ends it, as do an idle limit and the provider's own end (ToolProvider::expired). GET, which would open a stream of server messages, is 405.
//
// Private by default, as `kevo serve` is: a loopback address needs nothing, any other needs a token
// (`Authorization: Bearer TOKEN` on every request); without a token, the Host and Origin headers
// must name this machine, so a web page cannot reach the server through DNS rebinding.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "mcp/session.h"
#include "serve/listen.h"
#include "util/result.h"

namespace kevo::mcp {

struct HttpOptions {
  serve::ListenAddress listen{"127.0.0.1", 0};
  std::string token;                  // empty: none (loopback only)
  size_t max_body_bytes = 64u << 20;  // a larger POST is 413
  int max_sessions = 16;              // more at once: 503
  double idle_s = 3600;               // a session without a request this long is ended
};

// Makes the provider of a new session; an error refuses the `initialize` (503, with the message).
using ProviderFactory = std::function<Result<std::unique_ptr<ToolProvider>>()>;

class HttpServer {
 public:
  static Result<std::unique_ptr<HttpServer>> open(const HttpOptions& o, ServerInfo info, ProviderFactory factory);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const;
  std::string url() const;  // http://HOST:PORT/mcp
  // Serves until stop(); then ends every open session (each provider records its end).
  void run();
  void stop();
  int sessions() const;

 private:
  struct Impl;
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kevo::mcp
