#include "report/report.h"

#include <ctime>
#include <filesystem>

#include <fmt/format.h>

#include "report/charts.h"
#include "report/episodes_html.h"
#include "report/html.h"
#include "results/candidate_ref.h"
#include "results/metrics.h"
#include "util/fs.h"

namespace kevo::report {

namespace {

using results::fmt_pct;
using results::fmt_speedup;
using results::fmt_usd;

const char* kStyle = R"(
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2em auto;max-width:1200px;color:#222;padding:0 1em}
h1,h2,h3{font-weight:600}
table{border-collapse:collapse;margin:.5em 0 1.5em}
th,td{border:1px solid #ccc;padding:3px 8px;font-size:13px}
th{background:#f3f3f3}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.fake{background:#fde2e2;border:2px solid #c00;padding:.6em 1em;font-weight:600}
.grid{display:flex;flex-wrap:wrap;gap:10px}
.card{border:1px solid #ddd;padding:4px}
.scroll{overflow-x:auto}
svg text{font-family:system-ui,sans-serif}
table.diff{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px;width:100%;table-layout:fixed}
table.diff td{border:none;padding:0 6px;white-space:pre-wrap;word-break:break-all;vertical-align:top}
table.diff td.ln{width:3.5em;color:#888;text-align:right;user-select:none}
table.diff tr.hd td{background:#f3f3f3;font-weight:600;font-family:system-ui,sans-serif}
td.del{background:#ffe6e6} td.add{background:#e6ffe6} td.none{background:#f7f7f7}
.muted{color:#777}
)";

}  // namespace

const char* stylesheet() { return kStyle; }

namespace {

// A database file by its name only: a report is shared, and the folder it sat in (a home folder)
// is no business of its readers. A server's URL is shown as the store shows it (no password).
std::string shown_database(const std::string& db) {
  if (db.rfind("postgres", 0) == 0) return db;
  return std::filesystem::path(db).filename().string();
}

std::string summary_table(const std::vector<TableData>& data) {
  std::string s =
      "<table><tr><th>strategy / model</th><th>tasks</th><th>correct</th><th>median</th><th>geomean</th><th>mean</th>"
      "<th>geomean (unsolved = 1x)</th><th>fast_1</th><th>fast_1.5</th><th>fast_2</th><th>validity rate</th>"
      "<th>compile rate</th><th>candidates</th><th>tokens</th><th>cost</th></tr>";
  for (const auto& d : data) {
    const auto& a = d.table.agg;
    s += fmt::format(
        "<tr><td>{}</td><td class=num>{}</td><td class=num>{}</td><td class=num>{}</td><td class=num>{}</td>"
        "<td class=num>{}</td><td class=num>{}</td><td class=num>{}</td><td class=num>{}</td><td class=num>{}</td>"
        "<td class=num>{}</td><td class=num>{}</td><td class=num>{}</td><td class=num>{}</td><td class=num>{}</td></tr>",
        escape(d.table.key.label()), a.tasks, a.correct, fmt_speedup(a.median), fmt_speedup(a.geomean),
        fmt_speedup(a.mean), fmt_speedup(a.geomean_all), fmt_pct(a.fast_1), fmt_pct(a.fast_1_5), fmt_pct(a.fast_2),
        fmt_pct(a.validity_rate), fmt_pct(a.compile_rate), a.candidates, a.tokens, fmt_usd(a.cost_usd));
  }
  return s + "</table>";
}

std::string task_table(const results::BenchTable& t) {
  std::string s =
      "<table><tr><th>task</th><th>run</th><th>status</th><th>baseline ms</th><th>best ms</th><th>speedup</th>"
      "<th>vs eager</th><th>vs torch.compile</th><th>SOL</th><th>candidates</th><th>valid</th><th>compiled</th><th>tokens</th><th>cost</th></tr>";
  for (const auto& r : t.tasks) {
    std::string status = r.status + (r.correct() && !r.verified ? " (unverified)" : "");
    s += fmt::format(
        "<tr><td>{}</td><td class=num>{}</td><td>{}</td><td class=num>{}</td><td class=num>{}</td>"
        "<td class=num>{}</td><td class=num>{}</td><td class=num>{}</td><td class=num>{}</td><td class=num>{}</td>"
        "<td class=num>{}</td><td class=num>{}</td><td class=num>{}</td><td class=num>{}</td></tr>",
        escape(r.task), r.run_id ? std::to_string(r.run_id) : "-", escape(status), results::fmt_ms(r.baseline_ms),
        r.best_ms ? results::fmt_ms(*r.best_ms) : "-", fmt_speedup(r.speedup),
        r.speedup_vs_eager ? fmt_speedup(r.speedup_vs_eager) : "n/a",
        r.speedup_vs_compile ? fmt_speedup(r.speedup_vs_compile) : "n/a", r.sol_fraction ? fmt_pct(*r.sol_fraction) : "-",
        r.candidates, r.candidates ? fmt_pct(double(r.valid) / r.candidates) : "-",
        r.candidates ? fmt_pct(double(r.compiled) / r.candidates) : "-", r.tokens, fmt_usd(r.cost_usd));
  }
  return s + "</table>";
}

}  // namespace

// The LLM verifier against the checker, one small matrix per run that had one.
std::string verifier_tables(const TableData& d) {
  if (d.verifier.empty()) return {};
  std::string h = "<h3>LLM verifier against the checker</h3>\n<p class=muted>Positive: the verifier answered FAIL; "
                  "truth: the checker's verdict. It never decided anything in these runs.</p>\n";
  auto ratio = [](std::optional<double> v) { return v ? fmt::format("{:.2f}", *v) : std::string("n/a"); };
  for (const auto& r : d.table.tasks) {
    auto it = d.verifier.find(r.run_id);
    if (it == d.verifier.end()) continue;
    const auto& m = it->second;
    h += fmt::format("<table><caption>{} (run {}, {})</caption><tr><th></th><th>checker fail</th><th>checker pass</th>"
                     "</tr><tr><th>verifier FAIL</th><td>TP {}</td><td>FP {}</td></tr><tr><th>verifier PASS</th>"
                     "<td>FN {}</td><td>TN {}</td></tr></table>\n",
                     escape(r.task), r.run_id, escape(m.models), m.tp, m.fp, m.fn, m.tn);
    h += fmt::format("<p>precision {}, recall {}; {} calls, {} tokens, ${:.4f}; {} unanswered, {} not judged by the "
                     "checker</p>\n",
                     ratio(m.precision()), ratio(m.recall()), m.calls, m.input_tokens + m.output_tokens, m.cost_usd,
                     m.unanswered, m.no_verdict);
  }
  return h;
}

Result<std::vector<TableData>> load_report_data(const std::vector<std::string>& db_or_runs,
                                                const ProfileAdvisor& advise) {
  std::vector<TableData> out;
  for (const auto& arg : db_or_runs) {
    auto tables = results::load_tables(arg);
    if (!tables) return tables.unexpected();
    for (auto& t : *tables) {
      TableData d;
      auto db = store::RunDb::open_read_only(t.db);
      if (!db) return db.unexpected();
      for (const auto& r : t.tasks) {
        if (!r.run_id) continue;
        auto c = (*db)->candidates(r.run_id);
        if (!c) return c.unexpected();
        d.candidates[r.run_id] = std::move(*c);
        auto run = (*db)->get_run(r.run_id);
        if (!run) return run.unexpected();
        auto src = read_file(std::filesystem::path(run->task_dir) / "baseline.cu");
        d.baseline_source[r.run_id] = src ? *src : std::string();
        auto ev = (*db)->events(r.run_id);
        if (!ev) return ev.unexpected();
        if (auto m = results::verifier_matrix(*ev, d.candidates[r.run_id]); m.calls > 0) d.verifier[r.run_id] = m;
        if (auto eps = results::episodes_of(*ev); !eps.empty()) d.episodes[r.run_id] = std::move(eps);
        for (const auto& c : d.candidates[r.run_id])
          if (advise && c.id == r.best_candidate) d.winner_profile[r.run_id] = advise(c.verdict_json);
      }
      d.table = std::move(t);
      out.push_back(std::move(d));
    }
  }
  return out;
}

std::string render_html(const std::vector<TableData>& data, const std::string& title) {
  std::time_t now = std::time(nullptr);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M", std::localtime(&now));
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  h += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">";
  h += "<title>" + escape(title) + "</title><style>" + kStyle + "</style></head><body>\n";
  h += "<h1>" + escape(title) + "</h1>\n";
  h += fmt::format("<p class=muted>generated {} from {} table(s)</p>\n", when, data.size());
  bool any_fake = false;
  for (const auto& d : data) any_fake |= d.table.key.fake;
  if (any_fake)
    h += "<p class=fake>FAKE GPU: some results below came from the marker evaluator (<code>// fake:</code> "
         "comments), not from running kernels. They prove nothing about any kernel.</p>\n";
  if (data.empty()) return h + "<p>No runs.</p></body></html>\n";

  h += "<h2 id=summary>Summary</h2>\n" + summary_table(data);
  h += "<p class=muted>Speedups are the held-out-verified winners' re-timed speedups over the baseline. Median, "
       "geomean and mean are over tasks with a correct candidate; fast_p is the share of all tasks more than p "
       "times faster (a task without a correct candidate is not fast).</p>\n";
  h += "<h2 id=distribution>Speedup distribution per strategy</h2>\n<div class=scroll>" + distribution_chart(data) + "</div>\n";
  h += "<h2 id=rates>Validity and compile rates</h2>\n<div class=scroll>" + rates_chart(data) + "</div>\n";

  for (size_t i = 0; i < data.size(); ++i) {
    const auto& d = data[i];
    const auto& t = d.table;
    h += fmt::format("<h2 id=\"table-{}\">{}</h2>\n<p class=muted>database {}{}</p>\n", i + 1, escape(t.key.label()),
                     escape(shown_database(t.db)), t.suite.empty() ? "" : ", suite " + escape(t.suite));
    h += task_table(t);
    h += "<h3>Best-so-far speedup against candidates</h3>\n<div class=grid>";
    for (const auto& r : t.tasks) {
      auto it = d.candidates.find(r.run_id);
      if (it == d.candidates.end()) continue;
      h += "<div class=card>" + best_so_far_chart(r.task, it->second, r.speedup) + "</div>";
    }
    h += "</div>\n<h3>Winners: lineage and code</h3>\n";
    for (const auto& r : t.tasks) {
      if (!r.best_candidate) continue;
      const auto& cands = d.candidates.at(r.run_id);
      auto chain = results::lineage(cands, r.best_candidate);
      if (chain.empty()) continue;
      h += fmt::format("<details><summary><b>{}</b>: {} {} {}</summary>\n", escape(r.task),
                       results::candidate_ref(*chain.front()), fmt_speedup(r.speedup),
                       r.verified ? "(verified on held-out shapes)" : "(unverified)");
      h += "<div class=scroll>" + lineage_svg(chain) + "</div>\n";
      if (!chain.front()->rationale.empty()) h += "<p>idea: " + escape(chain.front()->rationale) + "</p>\n";
      if (auto e = d.episodes.find(r.run_id); e != d.episodes.end())
        h += episodes_summary_html(e->second, r.task) + winner_episode_html(e->second, cands, r.best_candidate);
      if (auto a = d.winner_profile.find(r.run_id); a != d.winner_profile.end() && !a->second.empty())
        h += "<p>profile (Nsight Compute, advice only): " + escape(a->second) + "</p>\n";
      const auto& base = d.baseline_source.count(r.run_id) ? d.baseline_source.at(r.run_id) : std::string();
      if (base.empty()) h += "<p class=muted>the baseline source was not found (task directory moved?)</p>\n";
      h += diff_table(base, *chain.front());
      h += "</details>\n";
    }
    h += verifier_tables(d);
  }
  return h + "</body></html>\n";
}

}  // namespace kevo::report
