// GET /runs/ID/candidates/N: one candidate in full. Everything from the model (source, answer,
// name, rationale) and from the checker (messages, diagnostics) is escaped text.
#include <fmt/format.h>

#include "report/charts.h"
#include "results/run_config.h"
#include "results/stored_json.h"
#include "results/table.h"
#include "serve/html_parts.h"
#include "serve/pages.h"

namespace kevo::serve {

using nlohmann::json;

namespace {

std::string parents_html(int64_t run, const std::vector<int64_t>& parents) {
  if (parents.empty()) return "baseline";
  std::string s;
  for (int64_t p : parents) s += (s.empty() ? "" : ", ") + cand_link(run, p);
  return s;
}

std::string meta_section(const CandidateDoc& doc) {
  const auto& c = doc.row;
  std::string rows = kv_row("run", fmt::format(R"(<a href="/runs/{0}">{0}</a>)", c.run_id));
  rows += kv_row("seq", std::to_string(c.seq)) + kv_row("operator", esc(c.op));
  rows += kv_row("generation / island / repair round",
                 fmt::format("{} / {} / {}", c.generation, c.island, c.repair_round));
  rows += kv_row("parents", parents_html(c.run_id, c.parents)) + kv_row("model", esc(c.model));
  rows += kv_row("name", esc(c.name)) + kv_row("completed", esc(time_text(c.created_at)));
  rows += kv_row("became the best", c.accepted ? "yes" : "no");
  rows += kv_row("lineage", fmt::format(R"(<a href="/runs/{}/lineage?candidate={}">ancestors</a>)", c.run_id, c.id));
  std::string s = "<table class=\"kv\">" + rows + "</table>\n";
  if (!c.rationale.empty()) s += "<p>idea: " + esc(c.rationale) + "</p>\n";
  return s;
}

std::string configs_table(const json& configs) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& k : configs) {
    if (!k.is_object()) continue;
    rows.push_back({esc(k.value("config", "")), k.value("held_out", false) ? "held out" : "",
                    k.value("ok", false) ? "ok" : "<b>FAIL</b>", value_text(k.value("draws", json())),
                    fmt::format("{:.3g}", k.value("max_abs_err", 0.0)), fmt::format("{:.3g}", k.value("max_rel_err", 0.0)),
                    "<span class=\"detail\">" + esc(k.value("detail", "")) + "</span>",
                    fmt::format("{:.2f}", k.value("seconds", 0.0))});
  }
  return html_table({"config", "", "result", "draws", "max abs err", "max rel err", "errors", "s"}, rows, "configs");
}

std::string verdict_section(const json& j) {
  const json& v = j["verdict"];
  std::string s = "<h2 id=\"verdict\">Verdict</h2>\n";
  const bool passed = store::candidate_outcome_or_unknown(results::text(j, "outcome")) == store::CandidateOutcome::kPass;
  s += fmt::format("<p class=\"verdict {}\"><b>{}</b>{} {}</p>\n", passed ? "ok" : "bad",
                   esc(j.value("outcome", "")), j.value("reason", "").empty() ? "" : " [" + esc(j.value("reason", "")) + "]",
                   esc(j.value("message", "")));
  if (j["configs"].is_array() && !j["configs"].empty()) s += "<h3>Correctness per config</h3>\n" + configs_table(j["configs"]);
  std::vector<std::vector<std::string>> findings;
  for (const auto& f : v.value("findings", json::array()))
    if (f.is_object())
      findings.push_back({esc(f.value("severity", "")), value_text(f.value("line", json())), esc(f.value("rule", "")),
                        esc(f.value("message", ""))});
  for (const auto& f : v.value("flags", json::array()))
    if (f.is_object())
      findings.push_back({"flag", "", esc(f.value("reason", "")), esc(f.value("detail", ""))});
  if (!findings.empty()) s += "<h3>Findings and flags</h3>\n" + html_table({"kind", "line", "rule", "message"}, findings);
  const json& comp = j["compile"];
  if (!comp.empty()) {
    s += fmt::format("<h3>Compile</h3>\n<p>{} {}</p>\n", comp.value("ok", false) ? "ok" : "<b>failed</b>",
                     esc(comp.value("arch", "")));
    if (!comp.value("diagnostics", "").empty()) s += "<pre class=\"diag\">" + esc(comp.value("diagnostics", "")) + "</pre>\n";
  }
  if (v.contains("sanitizer")) s += "<p>sanitizer: " + esc(value_text(v["sanitizer"])) + "</p>\n";
  return s;
}

std::string interval(const json& ci, const char* unit) {
  if (!ci.is_array() || ci.size() != 2) return "";
  return fmt::format(" (95% CI {:.4g} &ndash; {:.4g}{})", ci[0].is_number() ? ci[0].get<double>() : 0.0,
                     ci[1].is_number() ? ci[1].get<double>() : 0.0, unit);
}

std::string timing_section(const json& j) {
  const json& t = j["timing"];
  std::string s = "<h2 id=\"timing\">Timing</h2>\n";
  if (!t.is_object()) return s + "<p class=muted>not timed</p>\n";
  std::string rows = kv_row("config", esc(t.value("config", "")));
  rows += kv_row("time", fmt::format("{:.4g} ms", t.value("time_ms", 0.0)) + interval(t["time_ci_ms"], " ms"));
  rows += kv_row("samples / CV", fmt::format("{:.0f} / {:.2f}%", t.value("samples", 0.0), 100 * t.value("cv", 0.0)));
  rows += kv_row("baseline", fmt::format("{:.4g} ms", t.value("baseline_ms", 0.0)));
  rows += kv_row("speedup", fmt::format("{:.3f}x", t.value("speedup", 0.0)) + interval(t["speedup_ci"], "x"));
  rows += kv_row("speed of light", t.value("floor_ms", 0.0) > 0
                                       ? fmt::format("{} (floor {:.4g} ms, {} bound)", results::fmt_pct(t.value("sol_fraction", 0.0)),
                                                     t.value("floor_ms", 0.0), esc(t.value("bound", "")))
                                       : "-");
  const json& oc = t["outside_clock"];
  if (oc.is_object() && oc.contains("candidate") && oc["candidate"].is_object() &&
      oc["candidate"].value("outside_ms", 0.0) > 0)
    rows += kv_row("checker's clock", fmt::format("{:.4g} ms &plusmn; {:.2g} (events {:.4g} ms: {})",
                                                  oc["candidate"].value("outside_ms", 0.0), oc["candidate"].value("ci_ms", 0.0),
                                                  oc["candidate"].value("events_ms", 0.0),
                                                  esc(oc["candidate"].value("verdict", ""))));
  return s + "<table class=\"kv\">" + rows + "</table>\n";
}

std::string source_section(const CandidateDoc& doc) {
  const auto& c = doc.row;
  std::string s = "<h2 id=\"source\">Source</h2>\n";
  if (!doc.parent_label.empty())
    s += "<h3>Diff against " + esc(doc.parent_label) + "</h3>\n<div class=\"scroll\">" +
         report::diff_table(doc.parent_source, c.source, doc.parent_label, "candidate #" + std::to_string(c.id)) +
         "</div>\n";
  s += "<h3>Full source</h3>\n<pre class=\"source\" id=\"source-text\">" + esc(c.source) + "</pre>\n";
  s += "<h2 id=\"llm\">Prompt and answer</h2>\n";
  s += "<details><summary>prompt (" + std::to_string(c.prompt.size()) + " bytes)</summary><pre class=\"prompt\">" +
       esc(c.prompt) + "</pre></details>\n";
  s += "<details open><summary>answer (" + std::to_string(c.answer.size()) + " bytes)</summary><pre class=\"answer\">" +
       esc(c.answer) + "</pre></details>\n";
  return s;
}

}  // namespace

std::string candidate_page(const RunData& d, const CandidateDoc& doc) {
  const auto& c = doc.row;
  const json j = doc.to_json();
  std::string s = fmt::format("<h1>candidate #{} &middot; run {} &middot; {}</h1>\n", c.id, d.run.id, esc(d.run.task));
  // A fake run's verdicts say nothing about a kernel: said on every page that shows one.
  if (results::config_from_text(d.run.config_json).fake_evaluator)
    s += "<p class=fake>FAKE GPU: this verdict came from the marker evaluator (<code>// fake:</code> comments), not "
         "from running the kernel. It proves nothing about it.</p>\n";
  s += meta_section(doc) + verdict_section(j) + timing_section(j) + source_section(doc);
  return layout({fmt::format("candidate #{} (run {})", c.id, d.run.id), "candidate", d.run.id, d.version,
                 fmt::format(R"( &rsaquo; <a href="/runs/{0}">run {0}</a> &rsaquo; candidate #{1})", d.run.id, c.id)},
                s);
}

}  // namespace kevo::serve
