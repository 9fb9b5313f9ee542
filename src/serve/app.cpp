#include "serve/app.h"

#include <cctype>
#include <cstdint>

#include <fmt/format.h>

#include "serve/assets.h"
#include "serve/documents.h"
#include "serve/lineage.h"
#include "serve/pages.h"
#include "serve/run_charts.h"
#include "serve/run_summary.h"

namespace kevo::serve {

using nlohmann::json;

namespace {

// Candidates the run page lists, and events it shows.
constexpr int64_t kLatestOnRunPage = 25;
constexpr int64_t kEventsOnRunPage = 15;

bool is_api(const std::vector<std::string>& seg) { return !seg.empty() && seg[0] == "api"; }

ListQuery list_query(const HttpRequest& req) {
  ListQuery q;
  q.offset = req.int_param("offset", 0, 0, int64_t(1) << 40);
  q.limit = req.int_param("limit", 50, 1, kMaxPage);
  q.newest_first = req.param("order").value_or("desc") != "asc";
  q.outcome = req.param("outcome").value_or("");
  return q;
}

// The address to send a browser to after ?token=: the same path and parameters, less the token.
std::string without_token(const HttpRequest& req) {
  std::string q;
  for (const auto& [k, v] : req.params) {
    if (k == "token") continue;
    std::string enc;
    for (unsigned char c : v)
      enc += std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' ? std::string(1, char(c)) : fmt::format("%{:02X}", c);
    q += (q.empty() ? "?" : "&") + k + "=" + enc;
  }
  return req.path + q;
}

}  // namespace

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> seg;
  size_t pos = 0;
  while (pos < path.size()) {
    size_t next = path.find('/', pos);
    if (next == std::string::npos) next = path.size();
    if (next > pos) seg.push_back(path.substr(pos, next - pos));
    pos = next + 1;
  }
  return seg;
}

int64_t parse_id(const std::string& s) {
  if (s.empty() || s.size() > 18) return 0;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return 0;
    v = v * 10 + (c - '0');
  }
  return v;
}

void App::warm() {
  auto runs = cache_.db().list_runs();
  if (!runs) return;
  for (const auto& r : *runs) (void)cache_.with_run(r.id, [](const RunData&) {});
}

Reply App::handle(const HttpRequest& req) {
  Reply r;
  if (req.method != "GET" && req.method != "HEAD") {
    r = error_reply(req, 405, "kevo serve is read-only: only GET and HEAD");
    r.headers.emplace_back("Allow", "GET, HEAD");
  } else if (!host_allowed(req.host, opts_.listen, gate_.enabled())) {
    r = error_reply(req, 403, "unexpected Host header: open this server by its loopback address");
  } else if (Access a = gate_.check(req); a == Access::kDenied) {
    r = error_reply(req, 401, "a token is required: open the page once with ?token=TOKEN, or send "
                              "'Authorization: Bearer TOKEN'");
    r.headers.emplace_back("WWW-Authenticate", "Bearer");
  } else if (a == Access::kAllowedByQuery && !is_api(split_path(req.path))) {
    r = html_reply("<!DOCTYPE html><title>redirect</title>", 303);
    r.headers.emplace_back("Location", without_token(req));
    r.headers.emplace_back("Set-Cookie", gate_.set_cookie());
  } else {
    r = route(req);
    if (a == Access::kAllowedByQuery) r.headers.emplace_back("Set-Cookie", gate_.set_cookie());
  }
  for (const auto& h : security_headers()) r.headers.push_back(h);
  return r;
}

Reply App::route(const HttpRequest& req) {
  const auto seg = split_path(req.path);
  const bool api = is_api(seg);
  const size_t base = api ? 1 : 0;  // index of "runs"
  const double now = store::unix_now();
  if (seg.empty() || (api && seg.size() == 2 && seg[1] == "runs")) {
    auto doc = runs_doc(cache_, now);
    if (!doc) return error_reply(req, 503, doc.error().message);
    return api ? json_reply(*doc) : html_reply(index_page(*doc));
  }
  if (seg.size() == 1 && seg[0] == "app.js") return Reply{200, "text/javascript; charset=utf-8", app_js(), {}};
  if (seg.size() == 1 && seg[0] == "app.css") return Reply{200, "text/css; charset=utf-8", app_css(), {}};
  if (seg.size() > base + 1 && seg[base] == "runs") {
    const int64_t run = parse_id(seg[base + 1]);
    if (!run) return error_reply(req, 404, "no run " + seg[base + 1]);
    return run_route(req, run, std::vector<std::string>(seg.begin() + base + 2, seg.end()), api);
  }
  return error_reply(req, 404, "no such page: " + req.path);
}

Reply App::run_route(const HttpRequest& req, int64_t run, const std::vector<std::string>& rest, bool api) {
  if (rest.size() == 2 && rest[0] == "candidates") {
    const int64_t id = parse_id(rest[1]);
    if (!id) return error_reply(req, 404, fmt::format("run {} has no candidate {}", run, rest[1]));
    return candidate_route(req, run, id, api);
  }
  const double now = store::unix_now();
  Reply r = error_reply(req, 404, "no such page: " + req.path);
  auto st = cache_.with_run(run, [&](const RunData& d) {
    const std::string what = rest.empty() ? "" : rest[0];
    if (what.empty()) {
      if (api) {
        r = json_reply(run_summary(d, now));
        return;
      }
      auto events = events_doc(cache_.db(), run, 0, kEventsOnRunPage, true);
      r = html_reply(run_page(d, run_summary(d, now), candidates_doc(d, {0, kLatestOnRunPage, true, ""}),
                              events ? *events : json{{"events", json::array()}}));
    } else if (what == "candidates" && rest.size() == 1) {
      auto list = candidates_doc(d, list_query(req));
      r = api ? json_reply(list) : html_reply(candidates_page(d, list));
    } else if (what == "lineage" && rest.size() == 1) {
      int64_t root = req.int_param("candidate", task_result(d).best_candidate, 0, INT64_MAX);
      r = api ? json_reply(lineage_tree_json(d, root)) : html_reply(lineage_page(d, root));
    } else if (what == "events" && rest.size() == 1 && api) {
      auto ev = events_doc(cache_.db(), run, req.int_param("after", 0, 0, INT64_MAX), req.int_param("limit", 200, 1, 1000));
      r = ev ? json_reply(*ev) : error_reply(req, 503, ev.error().message);
    } else if (what == "charts" && rest.size() == 2 && !api) {
      if (auto svg = run_chart(d, rest[1], now)) r = svg_reply(std::move(*svg));
    }
  });
  if (!st) return lookup_failed(req, st.error(), fmt::format("no run {}", run));
  return r;
}

Reply App::candidate_route(const HttpRequest& req, int64_t run, int64_t id, bool api) {
  Reply r;
  Status found;
  auto st = cache_.with_run(run, [&](const RunData& d) {
    auto doc = candidate_doc(cache_.db(), d.run, id);
    if (!doc) {
      found = doc.unexpected();
      return;
    }
    r = api ? json_reply(doc->to_json()) : html_reply(candidate_page(d, *doc));
  });
  if (!st) return lookup_failed(req, st.error(), fmt::format("no run {}", run));
  if (!found) return lookup_failed(req, found.error(), fmt::format("run {} has no candidate {}", run, id));
  return r;
}

Reply App::lookup_failed(const HttpRequest& req, const Error& e, const std::string& what) {
  // A database that answers means the thing is not there; one that does not is unavailable.
  if (cache_.db().schema_version()) return error_reply(req, 404, what);
  return error_reply(req, 503, e.message);
}

}  // namespace kevo::serve
