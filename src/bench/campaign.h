// `kevo bench --campaign UNIT:TOTAL`: one budget for a whole suite instead of one per task. Every
// task first gets a slice (a few candidates); after that each slice goes where the bandit of
// task_bandit.h says the headroom and recent progress are, and a task whose best is within
// --stop-at-sol of its speed-of-light floor (0.85 by default) stops there. A slice is a start or a
// resume of the task's run with its candidate budget raised by the slice, so a campaign's runs are
// ordinary runs (kevo show, kevo bench table). The flat campaign is the comparison: the same total,
// an equal share per task, slices in turn, no early stop.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/suite_runner.h"
#include "util/result.h"

namespace kevo::bench {

enum class BudgetUnit { kCandidates, kTokens, kUsd };
const char* to_string(BudgetUnit u);  // "candidates", "tokens", "usd"

struct CampaignOptions {
  BudgetUnit unit = BudgetUnit::kCandidates;
  double total = 0;  // in `unit`
  int slice = 5;     // candidates per slice
  double stop_at_sol = 0.85;
  bool flat = false;  // equal shares in turn, no early stop
};

// "candidates:400", "tokens:2000000", "usd:5"; errors name what is wrong.
Result<CampaignOptions> parse_campaign_budget(std::string_view text);

// Why a task got no more of the budget.
enum class TaskStop {
  kNone,         // still eligible when the budget ran out (kBudgetSpent is then set)
  kNearSol,      // its best reached stop_at_sol of the floor
  kBudgetSpent,  // the campaign's budget ran out
  kShareSpent,   // flat: its equal share is spent
  kRunStopped,   // its run stopped for a reason of its own (detail: the run's stop reason)
  kError,        // it could not be run (detail: why)
  kInterrupted,
};
const char* to_string(TaskStop s);  // "near_sol", "budget_spent", "share_spent", "run_stopped", "error", ...

struct TaskLedger {
  std::string task;
  int64_t run_id = 0;
  int slices = 0;
  int64_t candidates = 0, tokens = 0;
  double usd = 0;
  double best_speedup = 0;  // the search's noise-aware best (visible configs)
  double sol = 0;           // its SOL fraction
  TaskStop stop = TaskStop::kNone;
  std::string detail;
  double spent(BudgetUnit u) const;
};

struct CampaignReport {
  CampaignOptions options;
  double spent = 0;  // in options.unit
  std::vector<TaskLedger> tasks;
  bool interrupted = false;
};

Result<CampaignReport> run_campaign(store::RunDb& db, const BenchSetup& setup, const CampaignOptions& c);

// Per task: spent, slices, verified speedup, SOL fraction, why it stopped; then median, geomean and
// the count of tasks slower than their baseline, beside the total spent.
std::string campaign_markdown(store::RunDb& db, const CampaignReport& r);

}  // namespace kevo::bench
