// The server's view of HTTP, without the HTTP library: a request as the app reads it (method, path,
// decoded query parameters, the few headers it looks at) and a reply (status, type, body, extra
// headers). server.cpp translates to and from cpp-httplib; everything else is plain functions of
// these, so the app is tested without sockets too.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace kevo::serve {

struct HttpRequest {
  std::string method = "GET";
  std::string path = "/";
  std::multimap<std::string, std::string> params;  // query parameters, percent-decoded
  std::string host, authorization, cookie;         // those request headers ("" when absent)

  // The first value of a query parameter.
  std::optional<std::string> param(const std::string& name) const;
  // A non-negative integer parameter; `fallback` when absent or not a number, clamped to [lo, hi].
  int64_t int_param(const std::string& name, int64_t fallback, int64_t lo, int64_t hi) const;
};

struct Reply {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // beyond the security headers
};

// The headers every reply carries: the Content-Security-Policy (same-origin scripts, styles and
// images only; nothing inline), nosniff, no framing, no referrer, no caching (the data is live).
const std::vector<std::pair<std::string, std::string>>& security_headers();

// Dumps JSON; text that is not valid UTF-8 (a model's answer may hold any bytes) is replaced, never
// an exception.
std::string dump_json(const nlohmann::json& j);

Reply json_reply(const nlohmann::json& j, int status = 200);
Reply html_reply(std::string html, int status = 200);
Reply svg_reply(std::string svg);
// An error as JSON for /api/ paths ({"error": message}), else as a small HTML page.
Reply error_reply(const HttpRequest& req, int status, const std::string& message);

}  // namespace kevo::serve
