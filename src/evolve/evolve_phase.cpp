// The search with a model: up to `parallel` proposals run on worker threads, ready candidates go
// to the evaluation pool, and each finished evaluation is recorded before anything else.
#include <algorithm>
#include <chrono>
#include <future>
#include <list>
#include <utility>

#include <fmt/format.h>

#include "evolve/archive_record.h"
#include "evolve/episode_phase.h"
#include "evolve/run_record.h"
#include "evolve/run_schedule.h"
#include "evolve/run_state.h"

namespace kevo::evolve {
namespace {

using Inflight = std::list<std::future<Proposal>>;

// A failed LLM call: counted, stored, and the run stopped where the failure says so.
Status handle_llm_failure(RunState& s, const Proposal& p) {
  ++s.calls;  // counted at launch as reserved; failures stay counted (they may be billed)
  KEVO_TRY(s.db.add_llm_call(call_row(s, p, p.llm_error)));
  switch (p.error_kind) {
    case llm::ErrorKind::kCancelled: break;
    case llm::ErrorKind::kBudget: s.stop_with(store::StopKind::kBudgetLlm, false); break;
    case llm::ErrorKind::kReplayMiss: s.stop_with(store::StopKind::kReplayExhausted, false); break;
    case llm::ErrorKind::kFatal: s.stop_with(store::StopKind::kLlmFatal, true, p.llm_error); break;
    default:
      s.emit("llm_error", {{"error", p.llm_error}});
      if (++s.llm_fail_in_row >= s.opts.max_llm_failures_in_row)
        s.stop_with(store::StopKind::kLlmFailures, false,
                    fmt::format("{} in a row, last: {}", s.llm_fail_in_row, p.llm_error));
  }
  return {};
}

void count_answer(RunState& s, const Proposal& p) {
  ++s.calls;
  s.llm_fail_in_row = 0;
  s.tokens += p.response.usage.total();
  s.cost += p.response.cost_usd;
  if (p.verifier) {  // its calls count against the budgets like any other
    ++s.calls;
    s.tokens += p.verifier->input_tokens + p.verifier->output_tokens;
    s.cost += p.verifier->cost_usd;
  }
}

store::CandidateRow invalid_row(const Proposal& p) {
  store::CandidateRow c;
  c.source = p.source;
  c.outcome = store::CandidateOutcome::kInvalidAnswer;
  c.reason = to_string(p.invalid_reason);
  c.message = clip(p.invalid_message, 2000);
  c.features_json = "{}";
  c.flags_json = "[]";
  return c;
}

// A ready proposal: accounted, then recorded as invalid or a repeat, or submitted to the pool.
Status handle(RunState& s, Proposal p) {
  if (p.episode) return account_episode(s, p);  // its attempts are candidates already
  if (!p.llm_ok) return handle_llm_failure(s, p);
  count_answer(s, p);
  if (s.hard_stop) {  // answered, but the run is stopping: keep the accounting only
    KEVO_TRY(s.db.add_llm_call(call_row(s, p, "discarded: run stopping")));
    return {};
  }
  if (p.invalid_reason != Reason::kNone) return store_proposal(s, invalid_row(p), p, p.invalid_message, p.job.base_source);
  const std::string fp = s.ev.fingerprint(p.source);
  if (auto dup = s.seen.find(fp); dup != s.seen.end()) {
    // The same program (comments and whitespace aside) as one already judged: no GPU time.
    s.emit("duplicate", {{"of", dup->second}});
    return store_proposal(s,
                          duplicate_row(p.source, dup->second == 0
                                                      ? std::string("the same code as the baseline")
                                                      : fmt::format("the same code as candidate #{}", dup->second)),
                          p, "", "");
  }
  if (s.evaluating.count(fp)) {
    s.emit("duplicate", {{"of", -1}});
    return store_proposal(s, duplicate_row(p.source, "the same code as a candidate being evaluated now"), p, "", "");
  }
  EvalRequest r;
  r.ticket = s.next_ticket++;
  r.file = p.file;
  r.source = p.source;
  r.opts = search_options(s);
  const int64_t ticket = r.ticket;
  KEVO_TRY(s.pool.submit(std::move(r)));
  s.evaluating.insert(fp);
  s.pending.emplace(ticket, Pending{std::move(p), fp});
  return {};
}

std::string first_mismatch(const Verdict& v) {
  for (const auto& c : v.configs)
    if (!c.ok && !c.detail.empty()) return c.detail;
  return v.message;
}

// A finished evaluation: its candidate recorded, repairs queued, the infrastructure watched.
Status complete(RunState& s, EvalDone d) {
  auto it = s.pending.find(d.ticket);
  if (it == s.pending.end()) return fail("an evaluation finished that was never started (ticket {})", d.ticket);
  Pending pe = std::move(it->second);
  s.pending.erase(it);
  s.evaluating.erase(pe.fingerprint);
  s.gpu_s += d.busy_s;
  const Verdict& v = d.verdict;
  if (v.outcome == Outcome::InfraError) {
    if (++s.infra_in_row >= 3) s.stop_with(store::StopKind::kInfraError, true, v.message);
  } else {
    s.infra_in_row = 0;
  }
  if (pe.speculative) {  // nobody asked for it yet: kept for the evaluate that will, or wasted
    complete_speculation(s, pe, v, d.busy_s);
    return {};
  }
  if (pe.reply) return complete_episode_attempt(s, std::move(pe), v);
  std::string feedback;
  if (v.outcome == Outcome::CompileError)
    feedback = "The compiler said:\n" + (v.compile ? v.compile->diagnostics : v.message);
  else if (v.outcome == Outcome::Incorrect)
    feedback = "The kernel compiled but produced wrong results. First mismatch:\n" + first_mismatch(v);
  const std::string source = pe.proposal.source;
  return store_proposal(s, row_from_verdict(v, source), pe.proposal, feedback, source);
}

// A run stopping at once leaves its queued evaluations (pool.can_leave_pending()): their LLM
// calls are recorded, no candidate is, and a resumed run starts from what was recorded.
Status leave_pending(RunState& s) {
  for (auto& [ticket, pe] : s.pending) {
    if (pe.speculative) {
      leave_speculation(s, pe);
      continue;
    }
    if (pe.reply) {  // an episode's attempt: the episode hears it, there is no call to record
      pe.reply->set_value(fail("the run stopped before this evaluation ran"));
      continue;
    }
    KEVO_TRY(s.db.add_llm_call(call_row(s, pe.proposal, "discarded: run stopping")));
  }
  s.emit("left_in_queue", {{"evaluations", s.pending.size()}});
  s.pending.clear();
  s.evaluating.clear();
  return {};
}

bool slot_free(const RunState& s) { return static_cast<int>(s.pending.size()) < s.pool.slots(); }

// Starts proposals while a slot is free (so with one slot each result is recorded before the
// next proposal is planned, as in a serial loop) and the budgets allow.
void refill(RunState& s, Inflight& inflight) {
  // An episode is not an evaluation: it may start (and think) while every slot is busy.
  while ((slot_free(s) || s.episodes) && s.stop.empty() &&
         inflight.size() < static_cast<size_t>(std::max(1, s.opts.strategy.parallel))) {
    const store::StopKind why = blocked(s, inflight.size() + s.pending.size());
    if (why != store::StopKind::kNone) {
      // Budgets reached with proposals still in flight: those finish; nothing new starts.
      if (why == store::StopKind::kInterrupted || why == store::StopKind::kBudgetMinutes) s.stop_with(why, true);
      else if (inflight.empty() && s.pending.empty()) s.stop_with(why, false);
      break;
    }
    if (s.opts.budgets.max_calls && s.calls + static_cast<int64_t>(inflight.size()) >= *s.opts.budgets.max_calls)
      break;  // the calls in flight may still fail and free their place
    Job j = plan_job(s);
    inflight.push_back(std::async(std::launch::async, [&s, j = std::move(j)]() mutable {
      if (s.episodes) return run_episode(s, std::move(j));
      return make_proposal(std::move(j), *s.llm, s.inner_cancel, s.ev, s.task, s.work_dir, {s.verifier, &s.ctx});
    }));
  }
}

std::optional<Proposal> take_ready(Inflight& inflight) {
  for (auto it = inflight.begin(); it != inflight.end(); ++it)
    if (it->wait_for(std::chrono::milliseconds(0)) == std::future_status::ready) {
      Proposal p = it->get();
      inflight.erase(it);
      return p;
    }
  return std::nullopt;
}

// Nothing was ready: watch Ctrl-C and the clock, show the status now and then, and wait briefly
// for whichever comes first.
Status wait_briefly(RunState& s, Inflight& inflight, SteadyClock::time_point& last_report) {
  if (s.user_cancel.cancelled()) s.stop_with(store::StopKind::kInterrupted, true);
  if (s.opts.budgets.max_minutes && since(s.t0) >= *s.opts.budgets.max_minutes * 60)
    s.stop_with(store::StopKind::kBudgetMinutes, true);
  if (since(last_report) > 1.0) {
    s.report(static_cast<int>(inflight.size() + s.pending.size()));
    last_report = SteadyClock::now();
  }
  if (!s.pending.empty()) {
    // Short: a proposal that becomes ready meanwhile should not wait for the next result.
    auto d = s.pool.next(std::chrono::milliseconds(inflight.empty() ? 20 : 2));
    if (!d) return d.unexpected();
    if (*d) KEVO_TRY(complete(s, std::move(**d)));
  } else {
    inflight.front().wait_for(std::chrono::milliseconds(20));
  }
  return {};
}

}  // namespace

// Proposals run on threads; evaluations in the pool. A finished evaluation is recorded first;
// a ready proposal is taken only when a slot is free for it.
Status evolve_phase(RunState& s) {
  Inflight inflight;
  if (s.opts.strategy.info.archive) s.archive_examples = archive_examples(s);
  s.broker.set_spend({s.opts.budgets.max_tokens, s.opts.budgets.max_usd}, s.tokens, s.cost);
  auto last_report = SteadyClock::now();
  while (true) {
    // Ctrl-C is seen here too: a long episode keeps this loop busy, and refill only looks when a
    // proposal could start.
    if (s.user_cancel.cancelled()) s.stop_with(store::StopKind::kInterrupted, true);
    refill(s, inflight);
    KEVO_TRY(feed_episode_attempts(s, [&s] { return slot_free(s); }));
    if (s.hard_stop && !s.pending.empty() && s.pool.can_leave_pending()) KEVO_TRY(leave_pending(s));
    if (inflight.empty() && s.pending.empty()) break;
    auto done = s.pool.next(std::chrono::milliseconds(0));
    if (!done) return done.unexpected();
    if (*done) {
      KEVO_TRY(complete(s, std::move(**done)));
    } else if (auto ready = slot_free(s) || s.episodes ? take_ready(inflight) : std::nullopt) {
      if (s.user_cancel.cancelled()) s.stop_with(store::StopKind::kInterrupted, true);
      KEVO_TRY(handle(s, std::move(*ready)));
    } else {
      KEVO_TRY(wait_briefly(s, inflight, last_report));
      continue;
    }
    s.report(static_cast<int>(inflight.size() + s.pending.size()));
    last_report = SteadyClock::now();
  }
  finish_speculation(s);
  return {};
}

}  // namespace kevo::evolve
