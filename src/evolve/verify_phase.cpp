// Held-out verification: the winner on held-out configurations with a fresh seed, re-timed. If
// the best fails, the next fastest valid candidates are tried; the outcome says which happened.
#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "evolve/archive_record.h"
#include "evolve/run_record.h"
#include "evolve/run_state.h"
#include "util/fs.h"

namespace kevo::evolve {
namespace {

using nlohmann::json;

// The best first, then up to verify_fallbacks runners-up, fastest first.
std::vector<const store::CandidateRow*> finalists(const RunState& s) {
  std::vector<const store::CandidateRow*> order;
  if (s.pop.best()) order.push_back(&s.rows.at(s.pop.best()->id));
  std::vector<const store::CandidateRow*> rest;
  for (const auto& [id, r] : s.rows)
    if (is_valid(r) && (order.empty() || id != order[0]->id)) rest.push_back(&r);
  std::stable_sort(rest.begin(), rest.end(), [](auto* a, auto* b) { return a->speedup > b->speedup; });
  for (size_t i = 0; i < rest.size() && static_cast<int>(i) < s.opts.strategy.verify_fallbacks; ++i)
    order.push_back(rest[i]);
  return order;
}

EvalOptions held_out_options(const RunState& s) {
  EvalOptions o = s.opts.eval;
  o.held_out_only = true;
  o.visible_only = false;
  o.time = true;
  o.time_budget_s = std::max(o.time_budget_s, s.opts.verify_time_budget_s);  // the winner's figure
  o.seed.reset();  // fresh inputs: nothing the search saw
  o.torch_time = !s.task.torch_reference.empty();  // the winner next to PyTorch, once
  o.profile = false;                               // held-out configs: nothing for a prompt
  o.baseline_ms = s.ctx.baseline_ms;               // the winner's figure, as every search figure
  o.baseline_gpu = s.ctx.gpu;
  return o;
}

VerifyAttempt attempt_of(int64_t candidate, const Verdict& v) {
  VerifyAttempt a{candidate, v.outcome, v.reason, v.static_rule, v.message};
  if (v.timing) {
    a.speedup = v.timing->speedup.value, a.speedup_lo = v.timing->speedup.lo, a.speedup_hi = v.timing->speedup.hi;
    json tj = json::object();
    add_pytorch_json(*v.timing, tj);
    if (!tj.empty()) a.pytorch = tj;
    a.pytorch_line = pytorch_text(*v.timing);
  }
  return a;
}

VerifyAttempt lost_attempt(int64_t candidate, const std::string& message) {
  VerifyAttempt lost;
  lost.candidate = candidate;
  lost.outcome = Outcome::InfraError;
  lost.reason = Reason::kEvaluator;
  lost.message = message;
  return lost;
}

}  // namespace

namespace {

// The finalists in turn until one passes (or none is left).
void verify_finalists(RunState& s, RunOutcome& out) {
  const std::vector<const store::CandidateRow*> order = finalists(s);
  for (size_t i = 0; i < order.size(); ++i) {
    const store::CandidateRow* r = order[i];
    if (s.user_cancel.cancelled()) return;
    s.phase = Progress::Phase::kHeldOut;
    s.phase_detail = fmt::format("candidate #{} ({:.3f}x), {} of up to {}", r->id, r->speedup, i + 1, order.size());
    s.report(0);
    auto file = s.work_dir / fmt::format("verify{}.cu", r->id);
    if (!write_file_atomic(file, r->source)) continue;
    auto ev = s.evaluate_now(file, r->source, held_out_options(s));
    if (!ev) {
      out.verification.push_back(lost_attempt(r->id, ev.error().message));
      continue;
    }
    const Verdict& v = *ev;
    VerifyAttempt a = attempt_of(r->id, v);
    out.verification.push_back(a);
    s.emit("verified", {{"candidate", r->id}, {"outcome", outcome_name(a.outcome)}, {"reason", a.reason_text()},
                        {"message", a.message}, {"speedup", a.speedup}});
    if (v.outcome == Outcome::Pass) {
      // A winner is faster than the baseline beyond noise; the runners-up are slower still.
      if (!v.timing || a.speedup_lo <= 1.0) {
        out.not_faster = true;
        return;
      }
      out.winner = r->id;
      out.winner_speedup = a.speedup;
      return;
    }
    if (r == order[0] && s.pop.best() && r->id == s.pop.best()->id) out.best_failed_held_out = true;
  }
}

}  // namespace

void verify_phase(RunState& s, RunOutcome& out) {
  verify_finalists(s, out);
  if (!s.user_cancel.cancelled()) archive_run(s, out);  // the winner and notable steps, kept across runs
}

}  // namespace kevo::evolve
