#include "results/metrics.h"

#include <algorithm>
#include <cmath>

#include "results/run_baseline.h"
#include "results/run_config.h"
#include "results/run_final.h"
#include "store/stop_reason.h"

namespace kevo::results {

namespace {

using store::CandidateOutcome;

const store::CandidateRow* find(const std::vector<store::CandidateRow>& cs, int64_t id) {
  for (const auto& c : cs)
    if (c.id == id) return &c;
  return nullptr;
}

size_t index_of(const std::vector<store::CandidateRow>& cs, const store::CandidateRow* c) {
  return static_cast<size_t>(c - cs.data());
}

// The run's result candidate and its speedup: a finished run's held-out-verified winner (its
// re-timed speedup, else its stored one), an unfinished run's current best.
std::pair<const store::CandidateRow*, double> result_of(const store::RunRow& run,
                                                        const std::vector<store::CandidateRow>& candidates,
                                                        bool* verified) {
  const bool done = run.status == store::RunStatus::kFinished || run.status == store::RunStatus::kFailed;
  if (!done) {
    const auto* best = run.best_candidate ? find(candidates, run.best_candidate) : nullptr;
    return {best, best ? best->speedup : 0};
  }
  const RunFinal fin = final_from_text(run.final_json);
  const auto* winner = fin.winner ? find(candidates, fin.winner) : nullptr;
  *verified = winner != nullptr;
  return {winner, winner ? (fin.winner_speedup > 0 ? fin.winner_speedup : winner->speedup) : 0};
}

void add_pytorch(const RunBaseline& base, TaskResult& r) {
  const PytorchTimes pt = base.pytorch_times();
  r.eager_ms = pt.eager_ms;
  r.compile_ms = pt.compile_ms;
  r.extension_ms = pt.extension_ms;
  if (!r.best_ms) return;
  auto over = [&](const std::optional<double>& ms) {
    return ms ? std::optional<double>(*ms / *r.best_ms) : std::nullopt;
  };
  r.speedup_vs_eager = over(r.eager_ms);
  r.speedup_vs_compile = over(r.compile_ms);
  r.speedup_vs_extension = over(r.extension_ms);
}

bool infra_outcome(const RunBaseline& base) {
  return base.outcome == CandidateOutcome::kInfraError || base.outcome == CandidateOutcome::kCrash ||
         base.outcome == CandidateOutcome::kTimeout;
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

TaskResult missing_task(const std::string& task) {
  TaskResult r;
  r.task = task;
  r.status = "missing";
  return r;
}

bool infra_failure(const store::RunRow& run) {
  if (run.status != store::RunStatus::kFailed) return false;
  // The engine's stop reasons for these: three infra_error verdicts in a row, or a baseline whose
  // verdict says the machine, not the kernel, failed.
  const store::StopKind why = store::parse_stop_reason(run.stop_reason).kind;
  if (why == store::StopKind::kInfraError) return true;
  return why == store::StopKind::kBaselineFailed && infra_outcome(baseline_from_text(run.baseline_json));
}

TaskResult task_result(const store::RunRow& run, const std::vector<store::CandidateRow>& candidates,
                       const store::RunTotals& totals) {
  std::vector<CandidateFigures> figures;
  figures.reserve(candidates.size());
  for (const auto& c : candidates) figures.push_back(figures_of(c));
  return task_result(run, candidates, figures, totals);
}

TaskResult task_result(const store::RunRow& run, const std::vector<store::CandidateRow>& candidates,
                       const std::vector<CandidateFigures>& figures, const store::RunTotals& totals) {
  TaskResult r;
  r.task = run.task;
  r.run_id = run.id;
  r.not_run = infra_failure(run);
  r.status = r.not_run ? "not run" : store::to_string(run.status);
  r.stop_reason = run.stop_reason;
  const RunBaseline base = baseline_from_text(run.baseline_json);
  r.fake = config_from_text(run.config_json).fake_evaluator || base.fake_evaluator;
  if (base.passed() && base.time_ms) r.baseline_ms = *base.time_ms;
  for (size_t i = 0; i < candidates.size(); ++i) {
    ++r.candidates;
    r.valid += candidates[i].passed();
    r.compiled += i < figures.size() && figures[i].compiled;
  }
  r.llm_calls = totals.llm_calls;
  r.tokens = totals.tokens;
  r.cost_usd = totals.cost_usd;
  bool verified = false;
  const auto [best, speedup] = result_of(run, candidates, &verified);
  r.verified = verified;
  if (best && best->passed() && speedup > 0) {
    r.best_candidate = best->id;
    r.speedup = speedup;
    if (best->time_ms > 0) r.best_ms = best->time_ms;
    const size_t i = index_of(candidates, best);
    const double sol = i < figures.size() ? figures[i].sol_fraction : 0;
    if (sol > 0) r.sol_fraction = sol;
    else if (base.sol_floor_ms > 0 && r.best_ms) r.sol_fraction = base.sol_floor_ms / *r.best_ms;
  }
  add_pytorch(base, r);
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
      a.slower += *result < 1.0;
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

}  // namespace kevo::results
