#include "bench/campaign.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "bench/task_bandit.h"
#include "results/metrics.h"
#include "results/run_baseline.h"
#include "results/table.h"
#include "results/verdict_view.h"
#include "store/stop_reason.h"
#include "util/enum_text.h"

namespace kevo::bench {

namespace {

constexpr EnumText<BudgetUnit> kUnitTexts[] = {
    {BudgetUnit::kCandidates, "candidates"},
    {BudgetUnit::kTokens, "tokens"},
    {BudgetUnit::kUsd, "usd"},
};

constexpr EnumText<TaskStop> kStopTexts[] = {
    {TaskStop::kNone, "-"},
    {TaskStop::kNearSol, "near_sol"},
    {TaskStop::kBudgetSpent, "budget_spent"},
    {TaskStop::kShareSpent, "share_spent"},
    {TaskStop::kRunStopped, "run_stopped"},
    {TaskStop::kError, "error"},
    {TaskStop::kInterrupted, "interrupted"},
};

// The budget kinds a slice ends on: the task may have more.
bool slice_end(store::StopKind k) {
  using K = store::StopKind;
  return k == K::kBudgetCandidates || k == K::kBudgetTokens || k == K::kBudgetUsd || k == K::kNone;
}

}  // namespace

const char* to_string(BudgetUnit u) { return enum_text(kUnitTexts, u); }
const char* to_string(TaskStop s) { return enum_text(kStopTexts, s); }

double TaskLedger::spent(BudgetUnit u) const {
  return u == BudgetUnit::kCandidates ? double(candidates) : u == BudgetUnit::kTokens ? double(tokens) : usd;
}

Result<CampaignOptions> parse_campaign_budget(std::string_view text) {
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos)
    return fail("--campaign '{}': expected UNIT:TOTAL (candidates:400, tokens:2000000, usd:5)", text);
  auto unit = enum_parse(kUnitTexts, text.substr(0, colon));
  if (!unit) return fail("--campaign '{}': {}", text, enum_unknown(kUnitTexts, "budget unit", text.substr(0, colon)));
  const std::string total(text.substr(colon + 1));
  char* end = nullptr;
  const double v = std::strtod(total.c_str(), &end);
  if (total.empty() || *end != '\0' || !(v > 0) || !std::isfinite(v))
    return fail("--campaign '{}': the total must be a number above 0", text);
  CampaignOptions c;
  c.unit = *unit;
  c.total = v;
  return c;
}

namespace {

struct Campaign {
  store::RunDb& db;
  const BenchSetup& s;
  const CampaignOptions& c;
  CampaignReport report;
  std::vector<std::optional<Task>> tasks;

  void log(const std::string& line) const {
    if (s.log) s.log(line);
  }
  double remaining() const { return c.total - report.spent; }
  Status slice(size_t i, TaskBandit& bandit);
  evolve::EngineOptions slice_options(const TaskLedger& t) const;
  void read_back(TaskLedger& t, const store::RunRow& run, const store::RunTotals& tot);
};

evolve::EngineOptions Campaign::slice_options(const TaskLedger& t) const {
  evolve::EngineOptions o = s.options;
  int n = c.slice;
  if (c.unit == BudgetUnit::kCandidates) n = std::max(1, std::min(n, static_cast<int>(std::floor(remaining()))));
  if (c.flat && c.unit == BudgetUnit::kCandidates)
    n = std::max(1, std::min(n, static_cast<int>(std::floor(c.total / double(tasks.size()) - double(t.candidates)))));
  o.budgets.max_candidates = static_cast<int>(t.candidates) + n;
  if (c.unit == BudgetUnit::kTokens) o.budgets.max_tokens = t.tokens + static_cast<int64_t>(remaining());
  if (c.unit == BudgetUnit::kUsd) o.budgets.max_usd = t.usd + remaining();
  if (!c.flat) o.budgets.stop_at_sol = c.stop_at_sol;
  else o.budgets.stop_at_sol.reset();
  return o;
}

void Campaign::read_back(TaskLedger& t, const store::RunRow& run, const store::RunTotals& tot) {
  report.spent += double(tot.candidates - t.candidates) * (c.unit == BudgetUnit::kCandidates) +
                  double(tot.tokens - t.tokens) * (c.unit == BudgetUnit::kTokens) +
                  (tot.cost_usd - t.usd) * (c.unit == BudgetUnit::kUsd);
  t.candidates = tot.candidates, t.tokens = tot.tokens, t.usd = tot.cost_usd;
  t.best_speedup = run.best_speedup;
  t.sol = 0;
  if (run.best_candidate)
    if (auto best = db.candidate(run.best_candidate)) t.sol = results::verdict_view(best->verdict_json).sol_fraction();
}

Status Campaign::slice(size_t i, TaskBandit& bandit) {
  TaskLedger& t = report.tasks[i];
  evolve::Engine engine(*tasks[i], *s.evaluator, db, s.llm, s.ensemble, *s.cancel);
  auto episodes = s.episodes_for ? s.episodes_for(*tasks[i]) : nullptr;
  engine.set_episodes(episodes.get());
  std::unique_ptr<evolve::EvalPool> pool;
  if (s.pool_for) {
    auto p = s.pool_for(*tasks[i]);
    if (!p) return p.unexpected();
    pool = std::move(*p);
  }
  engine.set_pool(pool.get());
  engine.set_gpu_util(s.gpu_util);
  if (s.progress) engine.set_progress([&](const evolve::Progress& p) { s.progress(t.task, p); });
  const double before = t.best_speedup;
  const int64_t had = t.candidates;
  auto r = t.run_id ? engine.resume(t.run_id, slice_options(t)) : engine.start(slice_options(t));
  if (!r) return r.unexpected();
  t.run_id = r->run_id;
  ++t.slices;
  auto run = db.get_run(t.run_id);
  auto tot = db.totals(t.run_id);
  if (!run) return run.unexpected();
  if (!tot) return tot.unexpected();
  read_back(t, *run, *tot);
  bandit.record(i, before > 0 ? before : 1.0, std::max(1.0, t.best_speedup), t.sol);
  const store::StopReason why = store::parse_stop_reason(r->stop_reason);
  log(fmt::format("campaign: {} slice {}: run {} {} ({}), {} candidates in all, best {:.3f}x, SOL {:.0f}%", t.task,
                  t.slices, t.run_id, store::to_string(r->status), r->stop_reason, t.candidates, t.best_speedup,
                  t.sol * 100));
  if (r->status == store::RunStatus::kInterrupted) {
    t.stop = TaskStop::kInterrupted;
    report.interrupted = true;
  } else if (!c.flat && (why.kind == store::StopKind::kNearSol || t.sol >= c.stop_at_sol)) {
    t.stop = TaskStop::kNearSol;
    t.detail = fmt::format("best at {:.0f}% of the floor", t.sol * 100);
  } else if (!slice_end(why.kind) || t.candidates == had) {
    t.stop = TaskStop::kRunStopped;
    t.detail = r->stop_reason.empty() ? "no candidate completed" : r->stop_reason;
  } else if (c.flat && t.spent(c.unit) >= c.total / double(tasks.size())) {
    t.stop = TaskStop::kShareSpent;
  }
  if (t.stop != TaskStop::kNone) bandit.stop(i);
  return {};
}

// Every task's first slice in order; then the bandit's choice, or (flat) each task in turn.
std::optional<size_t> choose(const TaskBandit& b, const CampaignReport& r, bool flat, size_t& turn) {
  const size_t n = r.tasks.size();
  for (size_t k = 0; k < n; ++k)
    if (!b.arms()[k].stopped && r.tasks[k].slices == 0) return k;
  if (!flat) return b.next();
  for (size_t k = 0; k < n; ++k) {
    const size_t i = turn++ % n;
    if (!b.arms()[i].stopped) return i;
  }
  return std::nullopt;
}

}  // namespace

Result<CampaignReport> run_campaign(store::RunDb& db, const BenchSetup& s, const CampaignOptions& c) {
  if (!s.evaluator || !s.cancel || !s.load_task) return fail("run_campaign: evaluator, cancel and load_task are required");
  if (c.slice < 1 || !(c.total > 0)) return fail("run_campaign: the slice and the total must be above 0");
  Campaign cp{db, s, c, {}, {}};
  cp.report.options = c;
  std::vector<ArmState> arms;
  for (const auto& name : s.tasks) {
    TaskLedger t;
    t.task = name;
    auto task = s.load_task(name);
    if (!task) t.stop = TaskStop::kError, t.detail = task.error().message;
    cp.tasks.push_back(task ? std::optional<Task>(std::move(*task)) : std::nullopt);
    cp.report.tasks.push_back(t);
    arms.push_back({name, 0, 0, 0, 0, t.stop != TaskStop::kNone});
  }
  TaskBandit bandit(std::move(arms));
  size_t turn = 0;
  while (cp.remaining() > 0 && !s.cancel->cancelled()) {
    const std::optional<size_t> i = choose(bandit, cp.report, c.flat, turn);
    if (!i) break;
    if (auto st = cp.slice(*i, bandit); !st) {
      cp.report.tasks[*i].stop = TaskStop::kError;
      cp.report.tasks[*i].detail = st.error().message;
      bandit.stop(*i);
      cp.log(fmt::format("campaign: {}: {}", cp.report.tasks[*i].task, st.error().message));
    }
    if (cp.report.interrupted) break;
  }
  if (s.cancel->cancelled()) cp.report.interrupted = true;
  for (auto& t : cp.report.tasks)
    if (t.stop == TaskStop::kNone) t.stop = TaskStop::kBudgetSpent;
  return cp.report;
}

}  // namespace kevo::bench

namespace kevo::bench {

namespace {

std::string spent_text(BudgetUnit u, double v) {
  return u == BudgetUnit::kUsd ? results::fmt_usd(v) : fmt::format("{:.0f}", v);
}

}  // namespace

std::string campaign_markdown(store::RunDb& db, const CampaignReport& r) {
  const BudgetUnit u = r.options.unit;
  std::string out = fmt::format("Campaign ({}): {} of {} {} spent{}\n\n", r.options.flat ? "flat, equal shares" : "SOL-guided",
                                spent_text(u, r.spent), spent_text(u, r.options.total), to_string(u),
                                r.options.flat ? "" : fmt::format(", stop at {:.0f}% of the floor", r.options.stop_at_sol * 100));
  out += "| task | run | slices | candidates | tokens | cost | speedup (verified) | SOL | stopped because |\n";
  out += "| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  std::vector<double> speedups;
  int slower = 0, unsolved = 0;
  for (const auto& t : r.tasks) {
    std::optional<double> speedup, sol;
    if (t.run_id) {
      auto run = db.get_run(t.run_id);
      auto cands = db.candidates(t.run_id);
      auto tot = db.totals(t.run_id);
      if (run && cands && tot) {
        const results::TaskResult tr = results::task_result(*run, *cands, *tot);
        speedup = tr.speedup;
        sol = tr.sol_fraction;
      }
    }
    if (speedup) speedups.push_back(*speedup), slower += *speedup < 1.0;
    else ++unsolved;
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {}{} |\n", t.task, t.run_id ? std::to_string(t.run_id) : "-",
                       t.slices, t.candidates, t.tokens, results::fmt_usd(t.usd), results::fmt_speedup(speedup),
                       sol ? results::fmt_pct(*sol) : "-", to_string(t.stop), t.detail.empty() ? "" : ": " + t.detail);
  }
  out += fmt::format("\nOver {} tasks with a verified speedup: median {}, geomean {}; {} slower than the baseline; {} "
                     "without a verified winner (the baseline stands).\n",
                     speedups.size(), results::fmt_speedup(results::median(speedups)),
                     results::fmt_speedup(results::geomean(speedups)), slower, unsolved);
  return out;
}

}  // namespace kevo::bench
