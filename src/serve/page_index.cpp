// GET /: the campaign and the runs list.
#include <fmt/format.h>

#include "serve/html_parts.h"
#include "serve/pages.h"

namespace kevo::serve {

using nlohmann::json;

namespace {

std::string campaign_table(const json& campaign) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& k : campaign) {
    const json& d = k["display"];
    rows.push_back({esc(k.value("label", "")), std::to_string(k.value("tasks", 0)), std::to_string(k.value("correct", 0)),
                    esc(d.value("median", "")), esc(d.value("geomean", "")), esc(d.value("fast_1", "")),
                    esc(d.value("validity", "")), esc(d.value("compile", "")),
                    std::to_string(k.value("candidates", int64_t(0))), std::to_string(k.value("tokens", int64_t(0))),
                    esc(d.value("cost", ""))});
  }
  return html_table({"strategy / model", "tasks", "correct", "median", "geomean", "fast_1", "validity",
                     "compile", "candidates", "tokens", "cost"},
                    rows);
}

std::string run_row(const json& r) {
  const int64_t id = r.value("id", int64_t(0));
  const json& d = r["display"];
  auto live = [&](const char* key) {
    return fmt::format(R"(<td data-live="{}">{}</td>)", key, esc(d.value(key, "")));
  };
  std::string model = r.value("strategy", "") + " / " + (r.value("llm", "").empty() ? "no model" : r.value("llm", ""));
  if (r.value("fake", false)) model += " (FAKE GPU)";
  return fmt::format(R"(<tr id="run-{0}"><td><a href="/runs/{0}">{0}</a></td><td>{1}</td><td>{2}</td>)", id,
                     esc(r.value("task", "")), esc(model)) +
         live("status") + live("candidates") + live("validity") + live("best") + live("tokens") + live("cost") +
         live("elapsed") + fmt::format("<td>{}</td></tr>", esc(time_text(r.value("updated_at", 0.0))));
}

}  // namespace

std::string index_page(const json& doc) {
  const json& runs = doc["runs"];
  std::string c = "<h1>kevo runs</h1>\n";
  c += fmt::format("<p class=muted>database {} &middot; {} run(s) &middot; read-only</p>\n",
                   esc(doc.value("database", "")), runs.size());
  if (runs.empty()) return layout({"kevo runs", "index", 0, 0, ""}, c + "<p>No runs in this database yet.</p>");
  c += "<h2>Campaign</h2>\n" + campaign_table(doc["campaign"]);
  c += "<p class=muted>Per strategy and model: the latest run of each task, figured as <code>kevo bench table</code> "
       "does (a run still going counts its current best, unverified).</p>\n";
  c += "<h2>Runs</h2>\n<table id=\"runs\"><thead><tr><th>run</th><th>task</th><th>strategy / model</th><th>status</th>"
       "<th>candidates</th><th>validity</th><th>best</th><th>tokens</th><th>cost</th><th>elapsed</th>"
       "<th>updated</th></tr></thead><tbody>";
  for (auto it = runs.rbegin(); it != runs.rend(); ++it) c += run_row(*it);
  c += "</tbody></table>\n";
  return layout({"kevo runs", "index", 0, 0, ""}, c);
}

}  // namespace kevo::serve
