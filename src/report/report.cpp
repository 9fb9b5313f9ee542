#include "report/report.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>

#include <fmt/format.h>

#include "report/charts.h"
#include "report/html.h"
#include "results/metrics.h"
#include "util/fs.h"

namespace kevo::report {

namespace {

using results::fmt_pct;
using results::fmt_speedup;
using results::fmt_usd;

const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};
const char* color(size_t i) { return kPalette[i % (sizeof kPalette / sizeof kPalette[0])]; }

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

std::string num(double v) { return fmt::format("{:.2f}", v); }

}  // namespace

const char* stylesheet() { return kStyle; }

// ---- charts ------------------------------------------------------------------------------------

std::string best_so_far_chart(const std::string& task, const std::vector<store::CandidateRow>& cands,
                              const std::optional<double>& result) {
  const double W = 280, H = 170, L = 40, R = 10, T = 22, B = 28;
  auto curve = results::best_so_far(cands);
  double ymax = 1.2;
  for (double v : curve) ymax = std::max(ymax, v);
  for (const auto& c : cands)
    if (c.passed()) ymax = std::max(ymax, c.speedup);
  ymax *= 1.1;
  size_t n = std::max<size_t>(curve.size(), 1);
  auto x = [&](double i) { return L + (W - L - R) * i / double(n); };
  auto y = [&](double v) { return H - B - (H - T - B) * v / ymax; };
  std::string s = fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" role="img">)", W, H);
  s += fmt::format(R"(<text x="{}" y="14" font-size="12" font-weight="600">{}</text>)", L, escape(task));
  s += fmt::format(R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="#999"/><line x1="{0}" y1="{2}" x2="{3}" y2="{2}" stroke="#999"/>)",
                   L, T, H - B, W - R);
  s += fmt::format(R"(<line x1="{0}" y1="{2}" x2="{1}" y2="{2}" stroke="#bbb" stroke-dasharray="3,3"/>)", L, W - R, num(y(1)));
  s += fmt::format(R"(<text x="{}" y="{}" font-size="10" text-anchor="end">1x</text>)", L - 3, num(y(1) + 3));
  s += fmt::format(R"(<text x="{}" y="{}" font-size="10" text-anchor="end">{:.2g}x</text>)", L - 3, T + 8, ymax);
  s += fmt::format(R"(<text x="{}" y="{}" font-size="10" text-anchor="middle">candidates ({})</text>)",
                   (L + W - R) / 2, H - 6, curve.size());
  // Every valid candidate as a dot, the best-so-far as a step line.
  std::vector<const store::CandidateRow*> order;
  for (const auto& c : cands) order.push_back(&c);
  std::stable_sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->seq < b->seq; });
  for (size_t i = 0; i < order.size(); ++i)
    if (order[i]->passed() && order[i]->speedup > 0)
      s += fmt::format(R"(<circle cx="{}" cy="{}" r="2" fill="#aaa"><title>#{} {:.3f}x</title></circle>)",
                       num(x(i + 0.5)), num(y(order[i]->speedup)), order[i]->id, order[i]->speedup);
  std::string pts;
  for (size_t i = 0; i < curve.size(); ++i) {
    if (curve[i] <= 0) continue;
    if (pts.empty()) pts += fmt::format("{},{} ", num(x(i)), num(y(curve[i])));
    pts += fmt::format("{},{} {},{} ", num(x(i)), num(y(curve[i])), num(x(i + 1)), num(y(curve[i])));
  }
  if (!pts.empty()) s += fmt::format(R"(<polyline points="{}" fill="none" stroke="#1f77b4" stroke-width="2"/>)", pts);
  s += fmt::format(R"(<text x="{}" y="14" font-size="11" text-anchor="end">{}</text>)", W - R,
                   result ? "result " + fmt_speedup(result) : std::string("no correct candidate"));
  return s + "</svg>";
}

std::string distribution_chart(const std::vector<TableData>& data) {
  const double W = 900, L = 260, R = 30, row = 44, T = 20;
  double H = T + row * double(data.size()) + 36;
  double lo = 0.5, hi = 2.0;
  for (const auto& d : data)
    for (const auto& t : d.table.tasks)
      if (t.speedup) lo = std::min(lo, *t.speedup), hi = std::max(hi, *t.speedup);
  double llo = std::log2(lo) - 0.1, lhi = std::log2(hi) + 0.1;
  auto x = [&](double v) { return L + (W - L - R) * (std::log2(v) - llo) / (lhi - llo); };
  std::string s = fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" role="img">)", W, num(H));
  for (double tick = std::pow(2.0, std::floor(llo)); tick <= std::pow(2.0, std::ceil(lhi)); tick *= 2) {
    if (tick < lo / 1.1 || tick > hi * 1.1) continue;
    s += fmt::format(R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="{3}" stroke-dasharray="{4}"/>)", num(x(tick)),
                     T - 5, num(H - 30), tick == 1 ? "#888" : "#ddd", tick == 1 ? "4,3" : "2,2");
    s += fmt::format(R"(<text x="{}" y="{}" font-size="11" text-anchor="middle">{:g}x</text>)", num(x(tick)),
                     num(H - 16), tick);
  }
  s += fmt::format(R"(<text x="{}" y="{}" font-size="11" text-anchor="middle">speedup over the baseline (log scale); one dot per task with a correct candidate</text>)",
                   (L + W - R) / 2, num(H - 2));
  for (size_t i = 0; i < data.size(); ++i) {
    const auto& t = data[i].table;
    double cy = T + row * (double(i) + 0.5);
    s += fmt::format(R"(<text x="{}" y="{}" font-size="12" text-anchor="end">{}</text>)", L - 10, num(cy - 4),
                     escape(t.key.label()));
    s += fmt::format(R"(<text x="{}" y="{}" font-size="11" text-anchor="end" fill="#555">median {} · {} of {} correct</text>)",
                     L - 10, num(cy + 10), fmt_speedup(t.agg.median), t.agg.correct, t.agg.tasks);
    size_t k = 0;
    for (const auto& r : t.tasks) {
      if (!r.speedup) continue;
      double jitter = (double(k++ % 5) - 2) * 3;
      s += fmt::format(R"(<circle cx="{}" cy="{}" r="4" fill="{}" fill-opacity="0.7"><title>{}: {}</title></circle>)",
                       num(x(*r.speedup)), num(cy + jitter), color(i), escape(r.task), fmt_speedup(r.speedup));
    }
    if (t.agg.correct)
      s += fmt::format(R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="#000" stroke-width="2"><title>median {3}</title></line>)",
                       num(x(t.agg.median)), num(cy - 14), num(cy + 14), fmt_speedup(t.agg.median));
  }
  return s + "</svg>";
}

std::string rates_chart(const std::vector<TableData>& data) {
  const double W = 900, L = 260, R = 80, bar = 14, T = 10;
  double H = T + double(data.size()) * (2 * bar + 16) + 10;
  std::string s = fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" role="img">)", W, num(H));
  for (size_t i = 0; i < data.size(); ++i) {
    const auto& a = data[i].table.agg;
    double y0 = T + double(i) * (2 * bar + 16);
    s += fmt::format(R"(<text x="{}" y="{}" font-size="12" text-anchor="end">{}</text>)", L - 10, num(y0 + bar + 4),
                     escape(data[i].table.key.label()));
    struct Bar { const char* name; double v; const char* col; int64_t part; };
    Bar bars[] = {{"compile", a.compile_rate, "#9ecae1", a.compiled}, {"valid", a.validity_rate, "#31a354", a.valid}};
    for (int b = 0; b < 2; ++b) {
      double y = y0 + b * bar;
      double w = (W - L - R) * bars[b].v;
      s += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="{}"><title>{} rate {}</title></rect>)", L,
                       num(y), num(w), bar - 2, bars[b].col, bars[b].name, fmt_pct(bars[b].v));
      s += fmt::format(R"(<text x="{}" y="{}" font-size="11">{} {} ({}/{})</text>)", num(L + w + 4), num(y + bar - 4),
                       bars[b].name, fmt_pct(bars[b].v), bars[b].part, a.candidates);
    }
  }
  return s + "</svg>";
}

std::string lineage_svg(const std::vector<const store::CandidateRow*>& chain) {
  // Oldest first: baseline -> ... -> winner.
  std::vector<const store::CandidateRow*> order(chain.rbegin(), chain.rend());
  const double bw = 150, bh = 46, gap = 30, pad = 6;
  double W = pad * 2 + (bw + gap) * double(order.size() + 1) - gap, H = bh + 2 * pad;
  std::string s = fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" role="img">)", num(W), num(H));
  s += R"(<defs><marker id="arr" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#666"/></marker></defs>)";
  auto box = [&](size_t i, const std::string& l1, const std::string& l2, const char* fill) {
    double x = pad + double(i) * (bw + gap);
    s += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" rx="5" fill="{}" stroke="#666"/>)", num(x), pad, bw, bh, fill);
    s += fmt::format(R"(<text x="{}" y="{}" font-size="12" text-anchor="middle">{}</text>)", num(x + bw / 2), pad + 18, escape(l1));
    s += fmt::format(R"(<text x="{}" y="{}" font-size="11" text-anchor="middle">{}</text>)", num(x + bw / 2), pad + 35, escape(l2));
    if (i > 0)
      s += fmt::format(R"svg(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#666" marker-end="url(#arr)"/>)svg", num(x - gap),
                       pad + bh / 2, num(x - 2), pad + bh / 2);
  };
  box(0, "baseline", "1.000x", "#eee");
  for (size_t i = 0; i < order.size(); ++i) {
    const auto* c = order[i];
    std::string l1 = fmt::format("#{} {}", c->id, c->op);
    if (c->parents.size() > 1) l1 += fmt::format(" (+#{})", c->parents[1]);
    std::string l2 = c->passed() ? fmt::format("{:.3f}x", c->speedup) : to_string(c->outcome);
    if (!c->name.empty()) l2 += " " + c->name.substr(0, 18);
    box(i + 1, l1, l2, i + 1 == order.size() ? "#d9f0d3" : "#fff");
  }
  return s + "</svg>";
}

std::string diff_table(const std::string& baseline, const std::string& winner, int64_t winner_id) {
  return diff_table(baseline, winner, "baseline", fmt::format("winner #{}", winner_id));
}

std::string diff_table(const std::string& left, const std::string& right, const std::string& left_label,
                       const std::string& right_label) {
  auto lines = line_diff(left, right);
  std::string s = fmt::format(
      R"(<table class="diff"><tr class="hd"><td class="ln"></td><td>{}</td><td class="ln"></td><td>{}</td></tr>)",
      escape(left_label), escape(right_label));
  auto cell = [](int ln, const std::string& text, const char* cls) {
    if (!ln) return fmt::format(R"(<td class="ln"></td><td class="none"></td>)");
    return fmt::format(R"(<td class="ln">{}</td><td class="{}">{}</td>)", ln, cls, escape(text));
  };
  int added = 0, removed = 0;
  for (size_t i = 0; i < lines.size();) {
    if (lines[i].op == DiffOp::kSame) {
      s += "<tr>" + cell(lines[i].left, lines[i].text, "") + cell(lines[i].right, lines[i].text, "") + "</tr>";
      ++i;
      continue;
    }
    std::vector<const DiffLine*> del, add;
    while (i < lines.size() && lines[i].op != DiffOp::kSame) {
      (lines[i].op == DiffOp::kRemoved ? del : add).push_back(&lines[i]);
      ++i;
    }
    removed += int(del.size());
    added += int(add.size());
    for (size_t k = 0; k < std::max(del.size(), add.size()); ++k) {
      s += "<tr>";
      s += k < del.size() ? cell(del[k]->left, del[k]->text, "del") : cell(0, "", "");
      s += k < add.size() ? cell(add[k]->right, add[k]->text, "add") : cell(0, "", "");
      s += "</tr>";
    }
  }
  s += "</table>";
  return fmt::format(R"(<p class="muted">{} lines removed, {} added</p>)", removed, added) + s;
}

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
      h += fmt::format("<details><summary><b>{}</b>: #{} {} {}</summary>\n", escape(r.task), r.best_candidate,
                       fmt_speedup(r.speedup), r.verified ? "(verified on held-out shapes)" : "(unverified)");
      h += "<div class=scroll>" + lineage_svg(chain) + "</div>\n";
      if (!chain.front()->rationale.empty()) h += "<p>idea: " + escape(chain.front()->rationale) + "</p>\n";
      if (auto a = d.winner_profile.find(r.run_id); a != d.winner_profile.end() && !a->second.empty())
        h += "<p>profile (Nsight Compute, advice only): " + escape(a->second) + "</p>\n";
      const auto& base = d.baseline_source.count(r.run_id) ? d.baseline_source.at(r.run_id) : std::string();
      if (base.empty()) h += "<p class=muted>the baseline source was not found (task directory moved?)</p>\n";
      h += diff_table(base, chain.front()->source, r.best_candidate);
      h += "</details>\n";
    }
    h += verifier_tables(d);
  }
  return h + "</body></html>\n";
}

}  // namespace kevo::report
