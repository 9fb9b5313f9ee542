#include "serve/http.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "report/html.h"

namespace kevo::serve {

std::optional<std::string> HttpRequest::param(const std::string& name) const {
  auto it = params.find(name);
  if (it == params.end()) return std::nullopt;
  return it->second;
}

int64_t HttpRequest::int_param(const std::string& name, int64_t fallback, int64_t lo, int64_t hi) const {
  auto v = param(name);
  int64_t x = fallback;
  if (v) {
    int64_t parsed = 0;
    auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), parsed);
    if (ec == std::errc() && end == v->data() + v->size()) x = parsed;
  }
  return std::clamp(x, lo, hi);
}

const std::vector<std::pair<std::string, std::string>>& security_headers() {
  static const std::vector<std::pair<std::string, std::string>> h = {
      {"Content-Security-Policy",
       "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"},
      {"X-Content-Type-Options", "nosniff"},
      {"X-Frame-Options", "DENY"},
      {"Referrer-Policy", "no-referrer"},
      {"Cross-Origin-Resource-Policy", "same-origin"},
      {"Cache-Control", "no-store"},
  };
  return h;
}

std::string dump_json(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Reply json_reply(const nlohmann::json& j, int status) {
  return Reply{status, "application/json; charset=utf-8", dump_json(j) + "\n", {}};
}

Reply html_reply(std::string html, int status) {
  return Reply{status, "text/html; charset=utf-8", std::move(html), {}};
}

Reply svg_reply(std::string svg) { return Reply{200, "image/svg+xml", std::move(svg), {}}; }

Reply error_reply(const HttpRequest& req, int status, const std::string& message) {
  if (req.path.rfind("/api/", 0) == 0) return json_reply({{"error", message}, {"status", status}}, status);
  return html_reply(fmt::format("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{0} {1}</title>"
                                "<link rel=\"stylesheet\" href=\"/app.css\"></head><body><h1>{0}</h1><p>{1}</p>"
                                "<p><a href=\"/\">all runs</a></p></body></html>\n",
                                status, report::escape(message)),
                    status);
}

}  // namespace kevo::serve
