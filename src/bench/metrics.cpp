#include "bench/metrics.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "check/outcome.h"
#include "store/stop_reason.h"
#include "util/json_fields.h"

namespace kevo::bench {

using nlohmann::json;

namespace {

json parse_object(const std::string& s) {
  json j = json::parse(s.empty() ? "{}" : s, nullptr, false);
  return j.is_object() ? j : json::object();
}

double number(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

const store::CandidateRow* find(const std::vector<store::CandidateRow>& cs, int64_t id) {
  for (const auto& c : cs)
    if (c.id == id) return &c;
  return nullptr;
}

}  // namespace

double median(std::vector<double> xs) {
  if (xs.empty()) return 0;
  std::sort(xs.begin(), xs.end());
  size_t n = xs.size();
  return n % 2 ? xs[n / 2] : (xs[n / 2 - 1] + xs[n / 2]) / 2;
}

double geomean(const std::vector<double>& xs) {
  if (xs.empty()) return 0;
  double s = 0;
  for (double x : xs) {
    if (!(x > 0)) return 0;
    s += std::log(x);
  }
  return std::exp(s / static_cast<double>(xs.size()));
}

double mean(const std::vector<double>& xs) {
  if (xs.empty()) return 0;
  double s = 0;
  for (double x : xs) s += x;
  return s / static_cast<double>(xs.size());
}

double fast_p(const std::vector<std::optional<double>>& speedups, double p) {
  if (speedups.empty()) return 0;
  int n = 0;
  for (const auto& s : speedups) n += s && *s > p;
  return static_cast<double>(n) / static_cast<double>(speedups.size());
}

bool compiled(const store::CandidateRow& c) {
  if (c.compile_json.empty()) return false;
  json j = json::parse(c.compile_json, nullptr, false);
  return field_or(j, "ok", false);
}

TaskResult missing_task(const std::string& task) {
  TaskResult r;
  r.task = task;
  r.status = "missing";
  return r;
}

bool infra_failure(const store::RunRow& run) {
  if (run.status != store::RunStatus::kFailed) return false;
  // The engine's stop reasons for these (evolve/engine.cpp): three infra_error verdicts in a row,
  // or a baseline whose verdict says the machine, not the kernel, failed.
  const store::StopKind why = store::parse_stop_reason(run.stop_reason).kind;
  if (why == store::StopKind::kInfraError) return true;
  if (why != store::StopKind::kBaselineFailed) return false;
  const auto outcome = baseline_outcome(parse_object(run.baseline_json));
  return outcome == Outcome::InfraError || outcome == Outcome::Crash || outcome == Outcome::Timeout;
}

std::optional<Outcome> baseline_outcome(const json& summary) {
  return outcome_from_name(field_or(summary, "outcome", std::string("pass")));
}

TaskResult task_result(const store::RunRow& run, const std::vector<store::CandidateRow>& candidates,
                       const store::RunTotals& totals) {
  TaskResult r;
  r.task = run.task;
  r.run_id = run.id;
  r.not_run = infra_failure(run);
  r.status = r.not_run ? "not run" : store::to_string(run.status);
  r.stop_reason = run.stop_reason;
  json base = parse_object(run.baseline_json);
  json cfg = parse_object(run.config_json);
  json fin = parse_object(run.final_json);
  r.fake = field_or(cfg, "fake_evaluator", false) || field_or(base, "fake_evaluator", false);
  if (baseline_outcome(base) == Outcome::Pass) r.baseline_ms = number(base, "time_ms");
  for (const auto& c : candidates) {
    ++r.candidates;
    r.valid += c.passed();
    r.compiled += compiled(c);
  }
  r.llm_calls = totals.llm_calls;
  r.tokens = totals.tokens;
  r.cost_usd = totals.cost_usd;

  const bool done = run.status == store::RunStatus::kFinished || run.status == store::RunStatus::kFailed;
  const store::CandidateRow* best = nullptr;
  double speedup = 0;
  if (done) {
    int64_t winner = fin.contains("winner") && fin["winner"].is_number_integer() ? fin["winner"].get<int64_t>() : 0;
    best = winner ? find(candidates, winner) : nullptr;
    if (best) {
      r.verified = true;
      speedup = number(fin, "winner_speedup") > 0 ? number(fin, "winner_speedup") : best->speedup;
    }
  } else if (run.best_candidate) {
    best = find(candidates, run.best_candidate);
    if (best) speedup = best->speedup;
  }
  if (best && best->passed() && speedup > 0) {
    r.best_candidate = best->id;
    r.speedup = speedup;
    if (best->time_ms > 0) r.best_ms = best->time_ms;
    json v = parse_object(best->verdict_json);
    double sol = v.contains("timing") && v["timing"].is_object() ? number(v["timing"], "sol_fraction") : 0;
    double floor_ms = number(base, "sol_floor_ms");
    if (sol > 0) r.sol_fraction = sol;
    else if (floor_ms > 0 && r.best_ms) r.sol_fraction = floor_ms / *r.best_ms;
  }
  // PyTorch's times (kevo bench records them in the baseline record; torch_time_ms: eager, older).
  json pt = base.contains("pytorch") && base["pytorch"].is_object() ? base["pytorch"] : json::object();
  auto positive = [](double x) { return x > 0 ? std::optional<double>(x) : std::nullopt; };
  r.eager_ms = positive(number(pt, "eager_ms") > 0 ? number(pt, "eager_ms") : number(base, "torch_time_ms"));
  r.compile_ms = positive(number(pt, "compile_ms"));
  r.extension_ms = positive(number(pt, "extension_ms"));
  if (r.best_ms) {
    auto over = [&](const std::optional<double>& ms) {
      return ms ? std::optional<double>(*ms / *r.best_ms) : std::nullopt;
    };
    r.speedup_vs_eager = over(r.eager_ms);
    r.speedup_vs_compile = over(r.compile_ms);
    r.speedup_vs_extension = over(r.extension_ms);
  }
  return r;
}

Aggregates aggregate(const std::vector<TaskResult>& tasks) {
  Aggregates a;
  std::vector<double> solved, all;
  std::vector<std::optional<double>> opt;
  for (const auto& t : tasks) {
    if (t.not_run) {
      ++a.not_run;
      continue;
    }
    ++a.tasks;
    // Only a held-out-verified result is solved: an unfinished run's best may fail there.
    const std::optional<double> result = t.verified ? t.speedup : std::nullopt;
    if (t.correct() && !t.verified) ++a.unverified;
    if (result) {
      ++a.correct;
      solved.push_back(*result);
    }
    all.push_back(result.value_or(1.0));
    opt.push_back(result);
    a.candidates += t.candidates;
    a.valid += t.valid;
    a.compiled += t.compiled;
    a.llm_calls += t.llm_calls;
    a.tokens += t.tokens;
    a.cost_usd += t.cost_usd;
  }
  a.median = median(solved);
  a.geomean = geomean(solved);
  a.mean = mean(solved);
  a.median_all = median(all);
  a.geomean_all = geomean(all);
  a.mean_all = mean(all);
  a.fast_1 = fast_p(opt, 1.0);
  a.fast_1_5 = fast_p(opt, 1.5);
  a.fast_2 = fast_p(opt, 2.0);
  if (a.candidates > 0) {
    a.validity_rate = static_cast<double>(a.valid) / static_cast<double>(a.candidates);
    a.compile_rate = static_cast<double>(a.compiled) / static_cast<double>(a.candidates);
  }
  return a;
}

std::vector<double> best_so_far(const std::vector<store::CandidateRow>& candidates) {
  std::vector<const store::CandidateRow*> order;
  for (const auto& c : candidates) order.push_back(&c);
  std::stable_sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->seq < b->seq; });
  std::vector<double> out;
  double best = 0;
  for (const auto* c : order) {
    if (c->accepted && c->passed() && c->speedup > 0) best = c->speedup;
    out.push_back(best);
  }
  return out;
}

std::vector<const store::CandidateRow*> lineage(const std::vector<store::CandidateRow>& candidates,
                                                int64_t winner) {
  std::vector<const store::CandidateRow*> chain;
  for (int64_t id = winner; id;) {
    const auto* c = find(candidates, id);
    if (!c || chain.size() > candidates.size()) break;  // a cycle cannot loop forever
    chain.push_back(c);
    id = c->parents.empty() ? 0 : c->parents.front();
  }
  return chain;
}

}  // namespace kevo::bench
