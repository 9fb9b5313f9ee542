// The optional access token of `kevo serve`. With one configured, every request must carry it: as
// `Authorization: Bearer TOKEN`, as the cookie this server sets, or once as `?token=TOKEN` (the
// reply then sets the cookie, HttpOnly and SameSite=Strict, and a page is redirected to its address
// without the token, so it stays out of history and logs). Tokens are compared in constant time.
// Also here: the Host check that keeps a loopback server from answering a page of another site
// whose name was rebound to 127.0.0.1 (DNS rebinding).
#pragma once

#include <string>

#include "serve/http.h"
#include "serve/listen.h"

namespace kevo::serve {

enum class Access {
  kAllowed,
  kAllowedByQuery,  // the right ?token=: set the cookie (and redirect a page)
  kDenied,
};

class TokenGate {
 public:
  explicit TokenGate(std::string token = "") : token_(std::move(token)) {}
  bool enabled() const { return !token_.empty(); }
  Access check(const HttpRequest& req) const;
  std::string set_cookie() const;  // the Set-Cookie header's value

 private:
  bool matches(const std::string& candidate) const;
  std::string token_;
};

inline constexpr const char* kTokenCookie = "kevo_token";

// Whether the Host header names this server: without a token, only a loopback name or the address
// it listens on (any port); with a token, anything (the token guards it).
bool host_allowed(const std::string& host_header, const ListenAddress& listen, bool token_enabled);

}  // namespace kevo::serve
