// GET /runs/ID: one run at a glance, kept current by /app.js from GET /api/runs/ID.
#include <fmt/format.h>

#include "results/candidate_ref.h"
#include "results/table.h"
#include "serve/activity.h"
#include "serve/html_parts.h"
#include "serve/lineage.h"
#include "serve/pages.h"

namespace kevo::serve {

using nlohmann::json;

namespace {

std::string chart_img(int64_t run, const char* name, uint64_t version, const char* alt) {
  return fmt::format(R"(<img class="chart" src="/runs/{0}/charts/{1}?v={2}" data-chart="/runs/{0}/charts/{1}" alt="{3}">)",
                     run, name, version, alt);
}

std::string progress_section(const json& s) {
  const json& d = s["display"];
  const json& p = s["progress"];
  std::string rows = kv_row("candidates", esc(d.value("candidates", "")), "candidates");
  rows += kv_row("budget used", esc(d.value("progress", "")) + " " + share_bar_svg(p.value("fraction", 0.0)), "");
  const std::pair<const char*, const char*> kinds[] = {
      {"llm_calls", "LLM calls"}, {"tokens", "tokens"}, {"usd", "cost (USD)"}, {"minutes", "minutes"}};
  for (const auto& [key, label] : kinds)
    if (p["budget"].contains(key))
      rows += kv_row(std::string(label) + " / budget",
                     esc(value_text(p["used"][key]) + " / " + value_text(p["budget"][key])));
  rows += kv_row("elapsed", esc(d.value("elapsed", "")), "elapsed");
  rows += kv_row("jobs in flight (queue)", esc(d.value("in_flight", "")), "in_flight");
  return "<h2 id=\"progress\">Progress</h2>\n<table class=\"kv\">" + rows + "</table>\n";
}

std::string result_section(const RunData& data, const json& s) {
  const int64_t run = data.run.id;
  const json& r = s["result"];
  const json& d = s["display"];
  std::string rows = kv_row("best", esc(d.value("best", "")), "best");
  const int64_t best = r.value("candidate", int64_t(0));
  rows += kv_row("candidate", cand_link(run, best, results::candidate_ref(data.candidates, best)));
  rows += kv_row("time (ms)", esc(value_text(r["time_ms"])));
  rows += kv_row("baseline (ms)", esc(value_text(r["baseline_ms"])));
  rows += kv_row("speed of light", esc(d.value("sol", "-")), "sol");
  return "<h2 id=\"result\">Result</h2>\n<table class=\"kv\">" + rows + "</table>\n";
}

std::string rates_section(const json& s, int64_t run, uint64_t version) {
  const json& d = s["display"];
  std::string c = "<h2 id=\"rates\">Validity and compile rates</h2>\n<table class=\"kv\">";
  c += kv_row("valid", esc(d.value("valid", "")), "valid") + kv_row("validity rate", esc(d.value("validity", "")), "validity");
  c += kv_row("compile rate", esc(d.value("compile", "")), "compile") + "</table>\n";
  c += chart_img(run, "rates.svg", version, "compile and validity rates") + "\n";
  std::vector<std::vector<std::string>> outcomes;
  for (const auto& [name, n] : s["outcomes"].items()) outcomes.push_back({esc(name), value_text(n)});
  c += "<h3>Outcomes</h3>\n" + html_table({"outcome", "candidates"}, outcomes);
  std::vector<std::vector<std::string>> reasons;
  for (const auto& f : s["failure_reasons"])
    reasons.push_back({esc(f.value("outcome", "")), esc(f.value("reason", "")), value_text(f["count"]),
                       cand_link(run, f.value("example", int64_t(0))), esc(f.value("message", ""))});
  c += "<h3>Failure reasons</h3>\n";
  c += reasons.empty() ? "<p class=muted>no failed candidates</p>\n"
                       : html_table({"outcome", "reason", "count", "latest", "message"}, reasons, "reasons");
  return c;
}

std::string activity_section(const json& s, int64_t run, uint64_t version) {
  std::string c = "<h2 id=\"activity\">Workers and GPUs</h2>\n";
  std::vector<std::vector<std::string>> w;
  for (const auto& x : s["workers"])
    w.push_back({esc(x.value("worker", "")), value_text(x["jobs"]), value_text(x["done"]), value_text(x["failed"]),
                 value_text(x["in_flight"]), value_text(x["retries"]), fmt::format("{:.1f}", x.value("busy_s", 0.0)),
                 results::fmt_pct(x.value("utilization", 0.0)) + " " + share_bar_svg(x.value("utilization", 0.0)),
                 esc(time_text(x.value("last_at", 0.0)))});
  c += w.empty() ? "<p class=muted>No queue jobs: the coordinator evaluated in-process (see GPUs).</p>\n"
                 : html_table({"worker", "jobs", "done", "failed", "in flight", "retries", "busy s", "utilization",
                               "last result"}, w);
  std::vector<std::vector<std::string>> g;
  for (const auto& x : s["gpus"])
    g.push_back({esc(x.value("device", "")), esc(x.value("uuid", "")), value_text(x["candidates"]),
                 value_text(x["passed"]), fmt::format("{:.1f}", x.value("eval_s", 0.0)),
                 results::fmt_pct(x.value("utilization", 0.0)) + " " + share_bar_svg(x.value("utilization", 0.0)),
                 esc(time_text(x.value("last_at", 0.0)))});
  c += "<h3>GPUs</h3>\n" + (g.empty() ? std::string("<p class=muted>no evaluated candidates yet</p>\n")
                                      : html_table({"device", "uuid", "candidates", "passed", "evaluation s",
                                                    "utilization", "last result"}, g));
  c += "<p class=muted>Utilization: evaluation seconds over the run's wall time (the evaluators' occupancy, not "
       "NVML's kernel time).</p>\n<h3>Activity over time</h3>\n" +
       chart_img(run, "activity.svg", version, "evaluations over time per worker or GPU") + "\n";
  return c;
}

std::string llm_section(const json& s) {
  const json& l = s["usage"];
  const json& d = s["display"];
  std::string rows = kv_row("calls", esc(d.value("llm_calls", "")), "llm_calls");
  rows += kv_row("tokens", esc(d.value("tokens", "")), "tokens") + kv_row("cost", esc(d.value("cost", "")), "cost");
  rows += kv_row("tokens per candidate", fmt::format("{:.0f}", l.value("tokens_per_candidate", 0.0)));
  rows += kv_row("cost per candidate", results::fmt_usd(l.value("usd_per_candidate", 0.0)));
  return "<h2 id=\"llm\">Cost and tokens</h2>\n<table class=\"kv\">" + rows + "</table>\n";
}

std::string lineage_section(const RunData& d, const json& s) {
  const int64_t winner = s["result"].value("candidate", int64_t(0));
  std::string c = "<h2 id=\"lineage\">Lineage of the winner</h2>\n";
  std::string svg = winner ? lineage_chain_svg(d, winner) : "";
  if (svg.empty()) return c + "<p class=muted>no correct candidate yet</p>\n";
  const size_t length = s.value("lineage_length", size_t(0));
  if (length > kChainDrawn)
    c += fmt::format("<p class=muted>{} candidates from the baseline to the winner; the nearest {} are drawn</p>\n",
                     length, kChainDrawn);
  return c + "<div class=\"scroll\">" + svg + "</div>\n" +
         fmt::format(R"(<p><a href="/runs/{}/lineage">the whole tree of ancestors</a></p>)", d.run.id) + "\n";
}

std::string events_section(const json& events) {
  std::vector<std::vector<std::string>> rows;
  const json& list = events["events"];
  for (auto it = list.rbegin(); it != list.rend(); ++it)
    rows.push_back({esc(time_text(it->value("t", 0.0))), esc(it->value("kind", "")), esc(value_text((*it)["data"]))});
  return "<h2 id=\"events\">Recent events</h2>\n" +
         (rows.empty() ? std::string("<p class=muted>none</p>") : html_table({"time", "kind", "data"}, rows, "events"));
}

std::string head_html(const RunData& d, const json& s) {
  const json& disp = s["display"];
  std::string model = s.value("strategy", "") + " / " + (s.value("llm", "").empty() ? "no model" : s.value("llm", ""));
  std::string c = fmt::format("<h1>run {} &middot; {} <span class=\"badge\" data-live=\"status\">{}</span></h1>\n",
                              d.run.id, esc(d.run.task), esc(disp.value("status", "")));
  c += fmt::format("<p class=muted>{} &middot; started {} &middot; stop reason: {}</p>\n", esc(model),
                   esc(time_text(d.run.created_at)), esc(d.run.stop_reason.empty() ? "-" : d.run.stop_reason));
  if (s.value("fake", false))
    c += "<p class=fake>FAKE GPU: verdicts came from the marker evaluator (<code>// fake:</code> comments), not from "
         "running kernels. They prove nothing about any kernel.</p>\n";
  if (!d.run.note.empty()) c += "<p>note: " + esc(d.run.note) + "</p>\n";
  return c;
}

}  // namespace

std::string run_page(const RunData& d, const json& s, const json& latest, const json& events) {
  const int64_t run = d.run.id;
  std::string c = head_html(d, s);
  c += "<div class=\"cols\"><div>" + progress_section(s) + "</div><div>" + result_section(d, s) + "</div><div>" +
       llm_section(s) + "</div></div>\n";
  c += "<h2 id=\"best\">Best speedup over time</h2>\n" +
       chart_img(run, "best.svg", d.version, "best-so-far speedup against candidates") + "\n";
  c += rates_section(s, run, d.version) + activity_section(s, run, d.version) + lineage_section(d, s);
  c += "<h2 id=\"latest\">Latest candidates</h2>\n<table class=\"cands\"><thead><tr>";
  for (const auto& h : kCandidateColumns) c += "<th>" + esc(h) + "</th>";
  c += "</tr></thead><tbody id=\"latest-rows\">" + candidate_rows_html(run, latest["candidates"]) + "</tbody></table>\n";
  c += fmt::format(R"(<p><a href="/runs/{0}/candidates">all {1} candidates</a> &middot; <a href="/runs/{0}/candidates?outcome=pass">valid ones</a> &middot; <a href="/api/runs/{0}">this run as JSON</a></p>)",
                   run, d.totals.candidates) + "\n";
  c += events_section(events);
  return layout({fmt::format("run {} {}", run, d.run.task), "run", run, d.version,
                 fmt::format(" &rsaquo; run {}", run)},
                c);
}

}  // namespace kevo::serve
