#include "report/charts.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <utility>

#include <fmt/format.h>

#include "report/html.h"
#include "report/svg_text.h"
#include "results/candidate_ref.h"
#include "results/metrics.h"

namespace kevo::report {

namespace {

using results::fmt_pct;
using results::fmt_speedup;

const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};
const char* color(size_t i) { return kPalette[i % (sizeof kPalette / sizeof kPalette[0])]; }

std::string num(double v) { return fmt::format("{:.2f}", v); }

std::string svg_open(double w, double h) {
  return fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" role="img">)",
                     num(w), num(h));
}

// A text cut to `max_width`; the whole of it as a tooltip where it was cut.
std::string fitted_text(double x, double y, double size, const char* attrs, const std::string& text, double max_width) {
  const std::string shown = fit_text(text, size, max_width);
  const std::string tip = shown == text ? "" : "<title>" + escape(text) + "</title>";
  return fmt::format(R"(<text x="{}" y="{}" font-size="{}"{}>{}{}</text>)", num(x), num(y), size, attrs, tip,
                     escape(shown));
}

// A left margin wide enough for every row label, ending `gap` before the plot and 4 from the edge.
template <typename Rows>
double left_margin(double least, double gap, const Rows& rows) {
  double l = least;
  for (const auto& [text, size] : rows) l = std::max(l, text_width(text, size) + gap + 4);
  return l;
}

}  // namespace

// ---- charts ------------------------------------------------------------------------------------

std::string best_so_far_chart(const std::string& task, const std::vector<store::CandidateRow>& cands,
                              const std::optional<double>& result) {
  const double W = 280, H = 170, R = 10, T = 22, B = 28;
  auto curve = results::best_so_far(cands);
  double ymax = 1.2;
  for (double v : curve) ymax = std::max(ymax, v);
  for (const auto& c : cands)
    if (c.passed()) ymax = std::max(ymax, c.speedup);
  ymax *= 1.1;
  const std::string top = fmt::format("{:.2g}x", ymax);
  const double L = std::max(40.0, text_width(top, 10) + 3 + 4);  // the y labels end 3 left of the axis
  size_t n = std::max<size_t>(curve.size(), 1);
  auto x = [&](double i) { return L + (W - L - R) * i / double(n); };
  auto y = [&](double v) { return H - B - (H - T - B) * v / ymax; };
  std::string s = svg_open(W, H);
  const std::string corner = result ? "result " + fmt_speedup(result) : std::string("no correct candidate");
  s += fitted_text(L, 14, 12, R"( font-weight="600")", task, W - R - L - text_width(corner, 11) - 8);
  s += fmt::format(R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="#999"/><line x1="{0}" y1="{2}" x2="{3}" y2="{2}" stroke="#999"/>)",
                   num(L), T, H - B, W - R);
  s += fmt::format(R"(<line x1="{0}" y1="{2}" x2="{1}" y2="{2}" stroke="#bbb" stroke-dasharray="3,3"/>)", num(L), W - R, num(y(1)));
  s += fmt::format(R"(<text x="{}" y="{}" font-size="10" text-anchor="end">1x</text>)", num(L - 3), num(y(1) + 3));
  s += fmt::format(R"(<text x="{}" y="{}" font-size="10" text-anchor="end">{}</text>)", num(L - 3), T + 8, top);
  s += fmt::format(R"(<text x="{}" y="{}" font-size="10" text-anchor="middle">candidates ({})</text>)",
                   num((L + W - R) / 2), H - 6, curve.size());
  // Every valid candidate as a dot, the best-so-far as a step line.
  std::vector<const store::CandidateRow*> order;
  for (const auto& c : cands) order.push_back(&c);
  std::stable_sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->seq < b->seq; });
  for (size_t i = 0; i < order.size(); ++i)
    if (order[i]->passed() && order[i]->speedup > 0)
      s += fmt::format(R"(<circle cx="{}" cy="{}" r="2" fill="#aaa"><title>{} {:.3f}x</title></circle>)",
                       num(x(i + 0.5)), num(y(order[i]->speedup)), results::candidate_ref(*order[i]), order[i]->speedup);
  std::string pts;
  for (size_t i = 0; i < curve.size(); ++i) {
    if (curve[i] <= 0) continue;
    if (pts.empty()) pts += fmt::format("{},{} ", num(x(i)), num(y(curve[i])));
    pts += fmt::format("{},{} {},{} ", num(x(i)), num(y(curve[i])), num(x(i + 1)), num(y(curve[i])));
  }
  if (!pts.empty()) s += fmt::format(R"(<polyline points="{}" fill="none" stroke="#1f77b4" stroke-width="2"/>)", pts);
  s += fmt::format(R"(<text x="{}" y="14" font-size="11" text-anchor="end">{}</text>)", W - R, corner);
  return s + "</svg>";
}

namespace {

std::string median_line(const results::BenchTable& t) {
  return fmt::format("median {} · {} of {} correct", fmt_speedup(t.agg.median), t.agg.correct, t.agg.tasks);
}

// One strategy's row of the distribution: its labels, a dot per task, its median as a bar.
std::string distribution_row(const results::BenchTable& t, size_t i, double L, double cy,
                             const std::function<double(double)>& x) {
  std::string s = fmt::format(R"(<text x="{}" y="{}" font-size="12" text-anchor="end">{}</text>)", num(L - 10),
                              num(cy - 4), escape(t.key.label()));
  s += fmt::format(R"(<text x="{}" y="{}" font-size="11" text-anchor="end" fill="#555">{}</text>)", num(L - 10),
                   num(cy + 10), median_line(t));
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
  return s;
}

}  // namespace

std::string distribution_chart(const std::vector<TableData>& data) {
  const double plot = 610, row = 44, T = 20;
  const char* caption = "speedup over the baseline (log scale); one dot per task with a correct candidate";
  std::vector<std::pair<std::string, double>> labels;
  for (const auto& d : data) {
    labels.emplace_back(d.table.key.label(), 12);
    labels.emplace_back(median_line(d.table), 11);
  }
  const double L = left_margin(260, 10, labels);
  double H = T + row * double(data.size()) + 36;
  double lo = 0.5, hi = 2.0;
  for (const auto& d : data)
    for (const auto& t : d.table.tasks)
      if (t.speedup) lo = std::min(lo, *t.speedup), hi = std::max(hi, *t.speedup);
  // Room on the right for half the widest tick label and for the caption, centred on the plot.
  const double R = std::max({30.0, text_width(fmt::format("{:g}x", hi), 11) / 2 + 4,
                             text_width(caption, 11) / 2 - plot / 2 + 4});
  const double W = L + plot + R;
  double llo = std::log2(lo) - 0.1, lhi = std::log2(hi) + 0.1;
  auto x = [&](double v) { return L + plot * (std::log2(v) - llo) / (lhi - llo); };
  std::string s = svg_open(W, H);
  for (double tick = std::pow(2.0, std::floor(llo)); tick <= std::pow(2.0, std::ceil(lhi)); tick *= 2) {
    if (tick < lo / 1.1 || tick > hi * 1.1) continue;
    s += fmt::format(R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="{3}" stroke-dasharray="{4}"/>)", num(x(tick)),
                     T - 5, num(H - 30), tick == 1 ? "#888" : "#ddd", tick == 1 ? "4,3" : "2,2");
    s += fmt::format(R"(<text x="{}" y="{}" font-size="11" text-anchor="middle">{:g}x</text>)", num(x(tick)),
                     num(H - 16), tick);
  }
  s += fmt::format(R"(<text x="{}" y="{}" font-size="11" text-anchor="middle">{}</text>)", num(L + plot / 2), num(H - 4),
                   caption);
  for (size_t i = 0; i < data.size(); ++i) s += distribution_row(data[i].table, i, L, T + row * (double(i) + 0.5), x);
  return s + "</svg>";
}

namespace {

struct RateBar {
  const char* name;
  double v;
  const char* col;
  int64_t part;
};

std::vector<RateBar> rate_bars(const results::Aggregates& a) {
  return {{"compile", a.compile_rate, "#9ecae1", a.compiled}, {"valid", a.validity_rate, "#31a354", a.valid}};
}

std::string rate_label(const RateBar& b, int64_t candidates) {
  return fmt::format("{} {} ({}/{})", b.name, fmt_pct(b.v), b.part, candidates);
}

}  // namespace

std::string rates_chart(const std::vector<TableData>& data) {
  const double plot = 560, bar = 14, T = 10;
  std::vector<std::pair<std::string, double>> labels;
  for (const auto& d : data) labels.emplace_back(d.table.key.label(), 12);
  const double L = left_margin(260, 10, labels);
  double W = L + plot + 80;  // wider where a bar's label, 4 right of its end, needs more
  for (const auto& d : data)
    for (const auto& b : rate_bars(d.table.agg))
      W = std::max(W, L + plot * std::clamp(b.v, 0.0, 1.0) + 4 + text_width(rate_label(b, d.table.agg.candidates), 11) + 4);
  double H = T + double(data.size()) * (2 * bar + 16) + 10;
  std::string s = svg_open(W, H);
  for (size_t i = 0; i < data.size(); ++i) {
    const auto& a = data[i].table.agg;
    double y0 = T + double(i) * (2 * bar + 16);
    s += fmt::format(R"(<text x="{}" y="{}" font-size="12" text-anchor="end">{}</text>)", num(L - 10), num(y0 + bar + 4),
                     escape(data[i].table.key.label()));
    const auto bars = rate_bars(a);
    for (size_t b = 0; b < bars.size(); ++b) {
      double y = y0 + double(b) * bar;
      double w = plot * std::clamp(bars[b].v, 0.0, 1.0);
      s += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="{}"><title>{} rate {}</title></rect>)", num(L),
                       num(y), num(w), bar - 2, bars[b].col, bars[b].name, fmt_pct(bars[b].v));
      s += fmt::format(R"(<text x="{}" y="{}" font-size="11">{}</text>)", num(L + w + 4), num(y + bar - 4),
                       rate_label(bars[b], a.candidates));
    }
  }
  return s + "</svg>";
}

namespace {

// A lineage box's two lines: who it is ("#13 (seq 8) mutate", a crossover's other parent) and
// what it scored, with its name.
std::pair<std::string, std::string> lineage_labels(const store::CandidateRow& c) {
  std::string l1 = results::candidate_ref(c) + " " + c.op;
  if (c.parents.size() > 1) l1 += fmt::format(" (+#{})", c.parents[1]);
  std::string l2 = c.passed() ? fmt::format("{:.3f}x", c.speedup) : to_string(c.outcome);
  if (!c.name.empty()) l2 += " " + c.name.substr(0, 18);
  return {l1, l2};
}

}  // namespace

std::string lineage_svg(const std::vector<const store::CandidateRow*>& chain) {
  // Oldest first: baseline -> ... -> winner.
  std::vector<const store::CandidateRow*> order(chain.rbegin(), chain.rend());
  std::vector<std::pair<std::string, std::string>> labels{{"baseline", "1.000x"}};
  for (const auto* c : order) labels.push_back(lineage_labels(*c));
  const double bh = 46, gap = 30, pad = 6;
  double bw = 150;  // every box as wide as the widest label needs
  for (const auto& [l1, l2] : labels) bw = std::max({bw, text_width(l1, 12) + 12, text_width(l2, 11) + 12});
  double W = pad * 2 + (bw + gap) * double(labels.size()) - gap, H = bh + 2 * pad;
  std::string s = svg_open(W, H);
  s += R"(<defs><marker id="arr" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#666"/></marker></defs>)";
  for (size_t i = 0; i < labels.size(); ++i) {
    const char* fill = i == 0 ? "#eee" : i + 1 == labels.size() ? "#d9f0d3" : "#fff";
    double x = pad + double(i) * (bw + gap);
    s += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" rx="5" fill="{}" stroke="#666"/>)", num(x), pad, num(bw), bh, fill);
    s += fmt::format(R"(<text x="{}" y="{}" font-size="12" text-anchor="middle">{}</text>)", num(x + bw / 2), pad + 18,
                     escape(labels[i].first));
    s += fmt::format(R"(<text x="{}" y="{}" font-size="11" text-anchor="middle">{}</text>)", num(x + bw / 2), pad + 35,
                     escape(labels[i].second));
    if (i > 0)
      s += fmt::format(R"svg(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#666" marker-end="url(#arr)"/>)svg", num(x - gap),
                       pad + bh / 2, num(x - 2), pad + bh / 2);
  }
  return s + "</svg>";
}

std::string diff_table(const std::string& baseline, const store::CandidateRow& winner) {
  return diff_table(baseline, winner.source, "baseline", "winner " + results::candidate_ref(winner));
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

}  // namespace kevo::report
