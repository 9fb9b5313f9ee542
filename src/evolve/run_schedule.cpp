#include "evolve/run_schedule.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "evolve/run_record.h"
#include "results/verdict_view.h"

namespace kevo::evolve {

store::StopKind blocked(const RunState& s, size_t in_flight) {
  using K = store::StopKind;
  const Budgets& b = s.opts.budgets;
  if (s.user_cancel.cancelled()) return K::kInterrupted;
  if (s.seq + static_cast<int>(in_flight) >= b.max_candidates) return K::kBudgetCandidates;
  if (b.max_calls && s.calls >= *b.max_calls) return K::kBudgetCalls;
  // Episodes still running count what their turns have spent so far.
  if (b.max_tokens && s.tokens + s.broker.tokens_in_flight() >= *b.max_tokens) return K::kBudgetTokens;
  if (b.max_usd && s.cost + s.broker.usd_in_flight() >= *b.max_usd) return K::kBudgetUsd;
  if (b.max_minutes && since(s.t0) >= *b.max_minutes * 60) return K::kBudgetMinutes;
  if (s.opts.strategy.stagnation > 0 && s.since_best >= s.opts.strategy.stagnation) return K::kStagnation;
  if (b.stop_at_sol && s.pop.best() && best_sol_fraction(s) >= *b.stop_at_sol) return K::kNearSol;
  return K::kNone;
}

double best_sol_fraction(const RunState& s) {
  if (!s.pop.best()) return 0;
  auto it = s.rows.find(s.pop.best()->id);
  return it == s.rows.end() ? 0 : results::verdict_view(it->second.verdict_json).sol_fraction();
}

namespace {

std::vector<SolutionView> views(const RunState& s, const std::vector<Member>& ms) {
  std::vector<SolutionView> out;
  for (const auto& m : ms) {
    auto it = s.rows.find(m.id);
    if (it == s.rows.end()) continue;
    const auto& r = it->second;
    auto d = s.diagnoses.find(r.id);
    out.push_back({r.id, r.name, r.rationale, r.source, r.speedup, r.time_ms,
                   d == s.diagnoses.end() ? std::string() : d->second});
  }
  return out;
}

std::vector<InsightView> insights(const RunState& s) {
  std::vector<InsightView> out;
  for (auto it = s.order.rbegin(); it != s.order.rend(); ++it) {
    if (static_cast<int>(out.size()) >= s.opts.strategy.insights_shown) break;
    const auto& r = s.rows.at(*it);
    if (r.rationale.empty()) continue;
    out.push_back({r.id, r.name, r.rationale, r.outcome, r.speedup});
  }
  return out;
}

Op choose_op(RunState& s) {
  const auto& ops = s.opts.strategy.operators;
  std::vector<double> w;
  for (const auto& [op, weight] : ops) w.push_back(weight);
  if (w.empty()) return Op::kMutate;
  std::discrete_distribution<size_t> d(w.begin(), w.end());
  return ops[d(s.rng)].first;
}

// An operator over parents the population selects (from the baseline until one is valid).
void plan_from_population(RunState& s, Job& j, PromptInput& in) {
  const StrategyConfig& st = s.opts.strategy;
  j.op = choose_op(s);
  j.island = st.population.kind == PolicyKind::kIslands ? s.pop.next_island() : 0;
  int k = 1;
  if (j.op == Op::kCrossover) k = 2;
  else if (j.op == Op::kRewrite) k = st.info.solutions ? st.solutions_shown : 0;
  else if (j.op == Op::kMutate) k = st.info.solutions ? std::max(1, st.solutions_shown) : 1;
  auto parents = s.pop.select(k, j.island, s.rng);
  if (j.op == Op::kCrossover && parents.size() < 2) j.op = Op::kMutate;
  if (parents.empty() && j.op != Op::kRewrite) j.op = Op::kInit;
  if (j.op == Op::kRewrite) {
    in.parents = views(s, parents);  // background only; no lineage from a rewrite
  } else if (!parents.empty()) {
    in.parents = views(s, parents);
    size_t n = j.op == Op::kCrossover ? 2 : 1;  // lineage: the operator's real inputs
    for (size_t i = 0; i < n && i < parents.size(); ++i) {
      j.parents.push_back(parents[i].id);
      j.generation = std::max(j.generation, parents[i].generation + 1);
    }
    j.parent_speedup = parents[0].speed.value;
    j.base_source = s.rows.at(parents[0].id).source;
  }
  if (j.generation == 0) j.generation = 1;
}

}  // namespace

Job plan_job(RunState& s) {
  const StrategyConfig& st = s.opts.strategy;
  PromptInput in;
  in.ctx = &s.ctx;
  Job j;
  if (!s.repairs.empty()) {
    j = std::move(s.repairs.front());
    s.repairs.pop_front();
    in.op = Op::kRepair;
    in.failed_source = j.base_source;
    in.feedback = j.prompt.user;  // the feedback travels in the queued job until now
  } else if (s.pop.empty()) {
    j.op = Op::kInit;  // until a first valid candidate exists, everything starts from the baseline
    j.generation = 1;
  } else {
    plan_from_population(s, j, in);
  }
  in.op = j.op;
  if (st.info.insights) in.insights = insights(s);
  if (st.info.archive) in.archive = s.archive_examples;
  j.no = s.next_job++;
  j.prompt = build_prompt(st, in);
  return j;
}

void queue_repair(RunState& s, const store::CandidateRow& failed, const std::string& source, std::string feedback) {
  if (failed.repair_round >= s.opts.strategy.repair_rounds) return;
  Job j;
  j.op = Op::kRepair;
  j.parents = {failed.id};
  j.base_source = source;
  j.prompt.user = clip(scrub_held_out(std::move(feedback), s.task), 4000);
  j.repair_round = failed.repair_round + 1;
  j.island = failed.island;
  j.generation = failed.generation + 1;
  j.parent_speedup = 1.0;
  s.repairs.push_back(std::move(j));
}

}  // namespace kevo::evolve
