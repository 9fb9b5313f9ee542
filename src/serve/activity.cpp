#include "serve/activity.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "report/html.h"
#include "report/svg_text.h"
#include "serve/run_summary.h"

namespace kevo::serve {

using nlohmann::json;

namespace {

constexpr int kBins = 60;  // time bins of the activity chart

double share(double part, double whole) { return whole > 0 ? std::min(1.0, part / whole) : 0.0; }

// Completion times per row: workers' finished jobs, else GPUs' evaluated candidates.
std::map<std::string, std::vector<double>> activity_rows(const RunData& d) {
  std::map<std::string, std::vector<double>> rows;
  for (const auto& j : d.jobs)
    if (!j.worker.empty() && j.finished_at > 0) rows[j.worker].push_back(j.finished_at);
  if (!rows.empty()) return rows;
  for (size_t i = 0; i < d.candidates.size(); ++i)
    if (!d.figures[i].device.empty()) rows[d.figures[i].device].push_back(d.candidates[i].created_at);
  return rows;
}

// A row's label: its worker or GPU (a long name cut) and its count.
std::string row_label(const std::string& name, size_t count) {
  return fmt::format("{} ({})", name.size() > 36 ? name.substr(0, 36) + "..." : name, count);
}

}  // namespace

json workers_json(const RunData& d, double now) {
  struct W { int64_t jobs = 0, done = 0, failed = 0, in_flight = 0, retries = 0; double busy = 0, last = 0; };
  std::map<std::string, W> by;
  for (const auto& j : d.jobs) {
    if (j.worker.empty()) continue;
    W& w = by[j.worker];
    ++w.jobs;
    w.done += j.state == store::JobState::kDone;
    w.failed += j.state == store::JobState::kFailed;
    w.in_flight += j.state == store::JobState::kClaimed;
    w.retries += std::max(0, j.attempts - 1);
    w.busy += j.busy_s;
    w.last = std::max(w.last, j.finished_at);
  }
  const double wall = elapsed_s(d.run, now);
  json out = json::array();
  for (const auto& [name, w] : by)
    out.push_back({{"worker", name}, {"jobs", w.jobs}, {"done", w.done}, {"failed", w.failed},
                   {"in_flight", w.in_flight}, {"retries", w.retries}, {"busy_s", w.busy},
                   {"utilization", share(w.busy, wall)}, {"last_at", w.last}});
  return out;
}

json gpus_json(const RunData& d, double now) {
  struct G { std::string uuid; int64_t n = 0, passed = 0; double busy = 0, last = 0; };
  std::map<std::string, G> by;
  for (size_t i = 0; i < d.candidates.size(); ++i) {
    const auto& f = d.figures[i];
    if (f.device.empty() && f.device_uuid.empty()) continue;
    G& g = by[f.device + "\x1f" + f.device_uuid];
    g.uuid = f.device_uuid;
    ++g.n;
    g.passed += d.candidates[i].passed();
    g.busy += f.eval_s;
    g.last = std::max(g.last, d.candidates[i].created_at);
  }
  const double wall = elapsed_s(d.run, now);
  json out = json::array();
  for (const auto& [key, g] : by)
    out.push_back({{"device", key.substr(0, key.find('\x1f'))}, {"uuid", g.uuid}, {"candidates", g.n},
                   {"passed", g.passed}, {"eval_s", g.busy}, {"utilization", share(g.busy, wall)},
                   {"last_at", g.last}});
  return out;
}

std::string activity_svg(const RunData& d, double now) {
  const auto rows = activity_rows(d);
  const double plot = 660, R = 10, T = 8, row_h = 20;
  double L = 230;  // wide enough for every row label, which ends 6 left of the cells
  for (const auto& [name, times] : rows) L = std::max(L, report::text_width(row_label(name, times.size()), 11) + 6 + 4);
  const double W = L + plot + R;
  const double H = T + row_h * double(std::max<size_t>(rows.size(), 1)) + 26;
  const double t0 = d.run.created_at, t1 = std::max(t0 + 1, t0 + elapsed_s(d.run, now));
  std::string s = fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" role="img">)", W, H);
  if (rows.empty())
    s += fmt::format(R"(<text x="{}" y="{}" font-size="12" fill="#777">no evaluations yet</text>)", L, T + 14);
  const double cell = (W - L - R) / kBins;
  double y = T;
  for (const auto& [name, times] : rows) {
    std::vector<int> bins(kBins, 0);
    for (double t : times) bins[std::clamp(int((t - t0) / (t1 - t0) * kBins), 0, kBins - 1)]++;
    const int peak = std::max(1, *std::max_element(bins.begin(), bins.end()));
    s += fmt::format(R"(<text x="{}" y="{}" font-size="11" text-anchor="end">{}</text>)", L - 6, y + 14,
                     report::escape(row_label(name, times.size())));
    for (int b = 0; b < kBins; ++b)
      if (bins[b])
        s += fmt::format(R"(<rect x="{:.1f}" y="{}" width="{:.1f}" height="{}" fill="#1f77b4" fill-opacity="{:.2f}"/>)",
                         L + b * cell, y + 3, cell - 1, row_h - 6, 0.15 + 0.85 * bins[b] / peak);
    y += row_h;
  }
  s += fmt::format(R"(<line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="#999"/>)", L, y + 2, W - R);
  s += fmt::format(R"(<text x="{}" y="{}" font-size="11">run start</text>)", L, y + 18);
  s += fmt::format(R"(<text x="{}" y="{}" font-size="11" text-anchor="end">{} (+{:.0f} s)</text>)", W - R, y + 18,
                   d.run.status == store::RunStatus::kRunning ? "now" : "end", t1 - t0);
  return s + "</svg>";
}

std::string share_bar_svg(double v) {
  v = std::clamp(v, 0.0, 1.0);
  return fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="104" height="12" class="bar" role="img">)"
                     R"(<rect x="0" y="1" width="104" height="10" fill="#eee"/>)"
                     R"(<rect x="0" y="1" width="{:.1f}" height="10" fill="#31a354"/></svg>)",
                     104 * v);
}

}  // namespace kevo::serve
