// GET /runs/ID/candidates: a page of candidate summaries, newest first, with paging links.
#include <fmt/format.h>

#include "results/stored_json.h"
#include "serve/html_parts.h"
#include "serve/pages.h"

namespace kevo::serve {

using nlohmann::json;

const std::vector<std::string> kCandidateColumns = {"candidate", "seq", "operator", "outcome", "speedup",
                                                    "time (ms)", "name", "model"};

std::string candidate_rows_html(int64_t run, const json& list) {
  std::string s;
  for (const auto& c : list) {
    std::string outcome = c.value("outcome", "");
    if (!c.value("reason", "").empty()) outcome += " [" + c.value("reason", "") + "]";
    const bool passed = store::candidate_outcome_or_unknown(results::text(c, "outcome")) == store::CandidateOutcome::kPass;
    std::string speedup = passed ? fmt::format("{:.3f}x", c.value("speedup", 0.0)) : "-";
    if (c.value("accepted", false)) speedup += " best";
    s += fmt::format("<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
                     "<td>{}</td></tr>",
                     passed ? "ok" : "bad", cand_link(run, c.value("id", int64_t(0))),
                     c.value("seq", 0), esc(c.value("op", "")), esc(outcome), esc(speedup),
                     c.value("time_ms", 0.0) > 0 ? fmt::format("{:.4g}", c.value("time_ms", 0.0)) : "-",
                     esc(c.value("name", "")), esc(c.value("model", "")));
  }
  return s;
}

std::string candidates_page(const RunData& d, const json& list) {
  const int64_t run = d.run.id, total = list.value("total", int64_t(0));
  const int64_t offset = list.value("offset", int64_t(0)), limit = list.value("limit", int64_t(50));
  const std::string outcome = list.value("outcome", "");
  std::string c = fmt::format("<h1>run {} &middot; {}: candidates</h1>\n", run, esc(d.run.task));
  c += "<p>show: ";
  for (const char* o : {"", "pass", "fail", "compile_error", "incorrect", "unsafe", "timeout", "crash"})
    c += fmt::format(R"(<a href="/runs/{}/candidates{}{}">{}</a> )", run, *o ? "?outcome=" : "", o, *o ? o : "all");
  c += "</p>\n";
  const int64_t shown = int64_t(list["candidates"].size());
  c += fmt::format("<p class=muted>{} to {} of {}, newest first</p>\n", total ? offset + 1 : 0, offset + shown, total);
  c += "<table class=\"cands\"><thead><tr>";
  for (const auto& h : kCandidateColumns) c += "<th>" + esc(h) + "</th>";
  c += "</tr></thead><tbody>" + candidate_rows_html(run, list["candidates"]) + "</tbody></table>\n<p>";
  const std::string filter = outcome.empty() ? "" : "&outcome=" + esc(outcome);
  if (offset > 0)
    c += fmt::format(R"(<a href="/runs/{}/candidates?offset={}&limit={}{}">newer</a> )", run,
                     std::max<int64_t>(0, offset - limit), limit, filter);
  if (offset + shown < total)
    c += fmt::format(R"(<a href="/runs/{}/candidates?offset={}&limit={}{}">older</a>)", run, offset + limit, limit, filter);
  c += "</p>\n";
  return layout({fmt::format("run {} candidates", run), "candidates", run, d.version,
                 fmt::format(R"( &rsaquo; <a href="/runs/{0}">run {0}</a> &rsaquo; candidates)", run)},
                c);
}

}  // namespace kevo::serve
