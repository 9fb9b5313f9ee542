#include "serve/run_summary.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "results/run_baseline.h"
#include "results/run_config.h"
#include "results/table.h"
#include "serve/activity.h"
#include "serve/lineage.h"

namespace kevo::serve {

using nlohmann::json;

namespace {

std::string duration(double s) {
  long t = static_cast<long>(std::max(0.0, s));
  if (t >= 3600) return fmt::format("{}h{:02d}m", t / 3600, (t / 60) % 60);
  return fmt::format("{}m{:02d}s", t / 60, t % 60);
}

std::string count_text(int64_t n) {
  if (n >= 1'000'000) return fmt::format("{:.1f}M", double(n) / 1e6);
  if (n >= 10'000) return fmt::format("{}k", n / 1000);
  return std::to_string(n);
}

json nullable(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

// The run's budgets (results/run_config.h) and how much of each is used.
json progress_json(const RunData& d, double now) {
  const results::RunBudgets b = results::config_from_text(d.run.config_json).budgets;
  const double minutes = elapsed_s(d.run, now) / 60;
  json used = {{"candidates", d.totals.candidates}, {"llm_calls", d.totals.llm_calls},
               {"tokens", d.totals.tokens}, {"usd", d.totals.cost_usd}, {"minutes", minutes}};
  auto as_number = [](const auto& limit) { return limit ? std::optional<double>(double(*limit)) : std::nullopt; };
  const std::pair<const char*, std::optional<double>> kinds[] = {
      {"candidates", as_number(b.max_candidates)}, {"llm_calls", as_number(b.max_calls)},
      {"tokens", as_number(b.max_tokens)}, {"usd", b.max_usd}, {"minutes", b.max_minutes}};
  json budget = json::object();
  double fraction = 0;
  for (const auto& [name, limit] : kinds) {
    if (!limit || *limit <= 0) continue;
    budget[name] = *limit;
    fraction = std::max(fraction, used[name].get<double>() / *limit);
  }
  int64_t in_flight = 0, queued = 0;
  for (const auto& j : d.jobs) {
    in_flight += j.state == store::JobState::kClaimed;
    queued += j.state == store::JobState::kQueued;
  }
  return {{"used", used}, {"budget", budget}, {"fraction", std::min(fraction, 1.0)},
          {"in_flight", in_flight}, {"queued", queued}};
}

json outcomes_json(const RunData& d) {
  std::map<std::string, int64_t> n;
  for (const auto& c : d.candidates) ++n[to_string(c.outcome)];
  return n;
}

// Failed candidates grouped by outcome and reason, most frequent first (at most 25 groups), each
// with its latest candidate as an example. Keyed by the outcome's text, so that groups of equal
// counts keep the (alphabetical) order the API has always listed them in.
json failure_reasons_json(const RunData& d) {
  struct Group { int64_t count = 0, example = 0; std::string message; };
  std::map<std::pair<std::string, std::string>, Group> groups;
  for (const auto& c : d.candidates) {
    if (c.passed()) continue;
    auto& g = groups[{to_string(c.outcome), c.reason}];
    ++g.count;
    g.example = c.id;
    g.message = c.message;
  }
  std::vector<std::pair<std::pair<std::string, std::string>, Group>> sorted(groups.begin(), groups.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second.count > b.second.count; });
  if (sorted.size() > 25) sorted.resize(25);
  json out = json::array();
  for (const auto& [key, g] : sorted)
    out.push_back({{"outcome", key.first}, {"reason", key.second}, {"count", g.count}, {"example", g.example},
                   {"message", g.message}});
  return out;
}

// The best-so-far curve's change points: [seq, speedup] where it changed, and the last seq.
json best_so_far_json(const RunData& d) {
  auto curve = results::best_so_far(d.candidates);
  json pts = json::array();
  double prev = -1;
  for (size_t i = 0; i < curve.size(); ++i)
    if (curve[i] != prev || i + 1 == curve.size()) {
      pts.push_back({int64_t(i + 1), curve[i]});
      prev = curve[i];
    }
  return pts;
}

json display_json(const RunData& d, const results::TaskResult& r, const json& progress, double now) {
  const json& budget = progress["budget"];
  std::string cands = count_text(d.totals.candidates);
  if (budget.contains("candidates")) cands += " / " + count_text(int64_t(budget["candidates"].get<double>()));
  std::string best = results::fmt_speedup(r.speedup);
  if (r.speedup) best += r.verified ? " (verified)" : " (unverified)";
  return {{"status", store::to_string(d.run.status)},
          {"candidates", cands},
          {"progress", results::fmt_pct(progress["fraction"].get<double>())},
          {"best", best},
          {"valid", fmt::format("{} of {}", r.valid, r.candidates)},
          {"validity", r.candidates ? results::fmt_pct(double(r.valid) / r.candidates) : "-"},
          {"compile", r.candidates ? results::fmt_pct(double(r.compiled) / r.candidates) : "-"},
          {"llm_calls", count_text(d.totals.llm_calls)},
          {"tokens", count_text(d.totals.tokens)},
          {"cost", results::fmt_usd(d.totals.cost_usd)},
          {"elapsed", duration(elapsed_s(d.run, now))},
          {"in_flight", std::to_string(progress["in_flight"].get<int64_t>())},
          {"sol", r.sol_fraction ? results::fmt_pct(*r.sol_fraction) : "-"}};
}

}  // namespace

double elapsed_s(const store::RunRow& run, double now) {
  double end = run.status == store::RunStatus::kRunning ? std::max(now, run.updated_at) : run.updated_at;
  return std::max(0.0, end - run.created_at);
}

const results::TaskResult& task_result(const RunData& d) {
  if (!d.result) d.result = results::task_result(d.run, d.candidates, d.figures, d.totals);
  return *d.result;
}

json run_brief(const RunData& d, double now) {
  const auto& r = task_result(d);
  const auto key = results::key_of(d.run);
  const json progress = progress_json(d, now);
  return {{"id", d.run.id},
          {"task", d.run.task},
          {"strategy", key.strategy},
          {"llm", key.llm},
          {"fake", r.fake},
          {"status", store::to_string(d.run.status)},
          {"stop_reason", d.run.stop_reason},
          {"note", d.run.note},
          {"created_at", d.run.created_at},
          {"updated_at", d.run.updated_at},
          {"elapsed_s", elapsed_s(d.run, now)},
          {"candidates", d.totals.candidates},
          {"valid", r.valid},
          {"compiled", r.compiled},
          {"budget_candidates", progress["budget"].value("candidates", 0.0)},
          {"best_candidate", r.best_candidate},
          {"speedup", nullable(r.speedup)},
          {"verified", r.verified},
          {"tokens", d.totals.tokens},
          {"cost_usd", d.totals.cost_usd},
          {"version", d.version},
          {"display", display_json(d, r, progress, now)}};
}

json run_summary(const RunData& d, double now) {
  const auto& r = task_result(d);
  json s = run_brief(d, now);
  s["progress"] = progress_json(d, now);
  s["result"] = {{"candidate", r.best_candidate}, {"speedup", nullable(r.speedup)}, {"verified", r.verified},
                 {"time_ms", nullable(r.best_ms)}, {"baseline_ms", r.baseline_ms > 0 ? json(r.baseline_ms) : json(nullptr)},
                 {"sol_fraction", nullable(r.sol_fraction)}};
  s["rates"] = {{"candidates", r.candidates}, {"valid", r.valid}, {"compiled", r.compiled},
                {"validity", r.candidates ? double(r.valid) / r.candidates : 0.0},
                {"compile", r.candidates ? double(r.compiled) / r.candidates : 0.0}};
  s["outcomes"] = outcomes_json(d);
  s["failure_reasons"] = failure_reasons_json(d);
  s["best_so_far"] = best_so_far_json(d);
  s["usage"] = {{"calls", d.totals.llm_calls}, {"tokens", d.totals.tokens}, {"cost_usd", d.totals.cost_usd},
              {"tokens_per_candidate", d.totals.candidates ? double(d.totals.tokens) / d.totals.candidates : 0.0},
              {"usd_per_candidate", d.totals.candidates ? d.totals.cost_usd / d.totals.candidates : 0.0}};
  s["workers"] = workers_json(d, now);
  s["gpus"] = gpus_json(d, now);
  s["lineage"] = lineage_chain_json(d, r.best_candidate, kChainInSummary);
  s["lineage_length"] = chain_of(d, r.best_candidate).size();
  const results::RunBaseline base = results::baseline_from_text(d.run.baseline_json);
  s["baseline"] = base.recorded ? base.to_json() : json::object();
  return s;
}

}  // namespace kevo::serve
