#include "evolve/run_state.h"

#include <algorithm>
#include <utility>

namespace kevo::evolve {

double since(SteadyClock::time_point t) {
  return std::chrono::duration<double>(SteadyClock::now() - t).count();
}

RunState::RunState(const RunServices& services, store::RunRow run, const EngineOptions& options)
    : RunServices(services), row(std::move(run)), opts(options), pop(options.strategy.population) {
  rng.seed(opts.seed ? opts.seed : std::random_device{}());
  row.status = store::RunStatus::kRunning;
  row.stop_reason.clear();
  if (gpu_util) util_t0 = gpu_util->mark();
}

void RunState::emit(const std::string& kind, const nlohmann::json& data) {
  if (events) events->emit(row.id, kind, data);
  (void)db.add_event(row.id, kind, data.dump());
}

Progress RunState::progress(int in_flight) const {
  Progress p;
  p.run_id = row.id;
  p.done = seq;
  p.budget = opts.budgets.max_candidates;
  p.valid = valid;
  p.in_flight = in_flight;
  p.best_speedup = pop.best() ? pop.best()->speed.value : 0;
  p.tokens = tokens;
  p.cost_usd = cost;
  p.elapsed_s = since(t0);
  p.gpu_busy = busy_share(gpu_s, p.elapsed_s);
  if (gpu_util) p.gpu_util = gpu_util->mean_since(util_t0);
  p.phase = phase;
  p.detail = phase_detail;
  if (search_t0 && seq > search_seq0 && p.budget > seq)
    p.eta_s = since(*search_t0) / (seq - search_seq0) * (p.budget - seq);
  return p;
}

void RunState::show(const Progress& p) const {
  if (on_progress) on_progress(p);
}

void RunState::report(int in_flight) const {
  if (on_progress) on_progress(progress(in_flight));
}

double RunState::busy_share(double busy_s, double wall_s) const {
  return wall_s > 0 ? std::min(1.0, busy_s / (wall_s * pool.slots())) : 0;
}

void RunState::stop_with(store::StopKind kind, bool hard, std::string detail) {
  if (stop.empty()) stop = {kind, std::move(detail)};
  if (hard) {
    hard_stop = true;
    inner_cancel.cancel();
  }
}

Result<Verdict> RunState::evaluate_now(const std::filesystem::path& file, const std::string& source, EvalOptions o) {
  EvalRequest r;
  r.ticket = next_ticket++;
  r.file = file;
  r.source = source;
  r.opts = std::move(o);
  auto d = pool.run_one(std::move(r), &user_cancel);
  if (!d) return d.unexpected();
  gpu_s += d->busy_s;
  return std::move(d->verdict);
}

namespace {

// Where a candidate stops mattering: below the best so far it can never replace it, and below the
// baseline it is no kernel a user wants.
double race_line(const RunState& s) {
  const auto& best = s.pop.best();
  return std::max(1.0, best ? best->speed.value : 0.0);
}

}  // namespace

EvalOptions search_options(const RunState& s) {
  EvalOptions o = s.opts.eval;
  o.visible_only = true;  // held-out configs are for re-verification only
  o.held_out_only = false;
  o.baseline_mode = false;
  o.time = true;
  if (s.opts.race_timing) o.timing_stop_below = race_line(s);
  // The run's own baseline figure: a candidate gains nothing from a baseline slowed in its session.
  o.baseline_ms = s.ctx.baseline_ms;
  o.baseline_gpu = s.ctx.gpu;
  return o;
}

}  // namespace kevo::evolve
