#include "evolve/run_record.h"

#include <utility>

#include <spdlog/spdlog.h>

#include "evolve/features.h"
#include "evolve/run_schedule.h"
#include "evolve/stored_verdict.h"
#include "results/verifier_matrix.h"

namespace kevo::evolve {

using nlohmann::json;

Member member_of(const store::CandidateRow& r) {
  Member m;
  m.id = r.id;
  m.speed = {r.speedup, r.speedup_lo, r.speedup_hi};
  m.island = r.island;
  m.generation = r.generation;
  m.cell = KernelFeatures::from_json(json::parse(r.features_json, nullptr, false)).cell();
  return m;
}

bool is_valid(const store::CandidateRow& r) { return r.passed() && r.speedup > 0; }

std::string clip(std::string s, size_t n) {
  if (s.size() > n) s = s.substr(0, n) + "\n[... trimmed]";
  return s;
}

void remember_source(RunState& s, const store::CandidateRow& c) {
  if (c.passed() && !c.verdict_json.empty()) {
    ProfileAdvice a = profile_advice(c.verdict_json);
    if (!a.diagnosis.empty()) s.diagnoses[c.id] = a.diagnosis;
    if (!a.not_profiled.empty() && !std::exchange(s.told_not_profiled, true))
      spdlog::warn("candidates are not profiled: {}; the search goes on without profiles", a.not_profiled);
  }
  if (c.outcome == store::CandidateOutcome::kInvalidAnswer || c.outcome == store::CandidateOutcome::kDuplicate ||
      c.source.empty())
    return;
  s.seen.emplace(s.ev.fingerprint(c.source), c.id);
}

store::CandidateRow row_from_verdict(const Verdict& v, const std::string& source) {
  store::CandidateRow c = candidate_row(v, source);
  if (v.outcome == Outcome::Pass && v.timing) {
    c.time_ms = v.timing->candidate.median;
    c.speedup = v.timing->speedup.value;
    c.speedup_lo = v.timing->speedup.lo;
    c.speedup_hi = v.timing->speedup.hi;
  }
  return c;
}

store::CandidateRow duplicate_row(const std::string& source, const std::string& same_as) {
  store::CandidateRow c;
  c.source = source;
  c.outcome = store::CandidateOutcome::kDuplicate;
  c.reason = to_string(Reason::kDuplicate);
  c.message = same_as + " (comments and whitespace ignored); not evaluated again";
  c.features_json = "{}";
  c.flags_json = "[]";
  return c;
}

namespace {

// The run's events for a stored candidate: it, a new best, and what the population did.
void emit_recorded(RunState& s, const store::CandidateRow& c, const Completion& done) {
  s.emit("candidate", {{"candidate", c.id}, {"seq", c.seq}, {"operator", c.op}, {"parents", c.parents},
                       {"model", c.model}, {"outcome", to_string(c.outcome)}, {"reason", c.reason},
                       {"speedup", c.speedup}, {"speedup_ci", {c.speedup_lo, c.speedup_hi}},
                       {"generation", c.generation}, {"island", c.island}, {"accepted", c.accepted}});
  if (c.accepted) {
    s.row.best_candidate = c.id;
    s.row.best_speedup = c.speedup;
    (void)s.db.update_run(s.row);
    s.emit("new_best", {{"candidate", c.id}, {"speedup", c.speedup}, {"speedup_ci", {c.speedup_lo, c.speedup_hi}}});
  }
  if (done.migrated) s.emit("migration", {{"completed", s.pop.completed()}});
  if (!done.reset.empty()) s.emit("island_reset", {{"completed", s.pop.completed()}, {"islands", done.reset}});
}

store::LlmCallRow verifier_call_row(const RunState& s, const VerifierAnswer& a) {
  store::LlmCallRow c;
  c.run_id = s.row.id;
  c.model = a.model;
  c.purpose = "verify";
  c.input_tokens = a.input_tokens;
  c.output_tokens = a.output_tokens;
  c.cost_usd = a.cost_usd;
  c.latency_s = a.latency_s;
  c.from_cache = a.from_cache;
  c.error = a.error;
  return c;
}

}  // namespace

Result<store::CandidateRow> record(RunState& s, store::CandidateRow c, const std::vector<store::LlmCallRow>& calls) {
  c.run_id = s.row.id;
  c.seq = ++s.seq;
  bool valid = is_valid(c);
  Member m = member_of(c);
  bool new_best = valid && (!s.pop.best() || confidently_faster(m.speed, s.pop.best()->speed));
  c.accepted = new_best;
  if (auto st = s.db.add_candidate(c, calls); !st) {
    --s.seq;
    return st.unexpected();
  }
  m.id = c.id;
  if (valid) {
    ++s.valid;
    s.pop.offer(m);
  }
  s.since_best = new_best ? 0 : s.since_best + 1;
  Completion done = s.pop.note_completed();
  s.order.push_back(c.id);
  remember_source(s, c);
  s.rows[c.id] = c;
  emit_recorded(s, c, done);
  return c;
}

Status store_proposal(RunState& s, store::CandidateRow c, const Proposal& p, const std::string& repair_feedback,
                      const std::string& repair_source) {
  c.op = to_string(p.job.op);
  c.parents = p.job.parents;
  c.generation = p.job.generation;
  c.island = p.job.island;
  c.repair_round = p.job.repair_round;
  c.model = p.response.model;
  c.prompt = p.job.prompt.system + "\n\n" + p.job.prompt.user;
  c.answer = p.response.text;
  c.name = p.name;
  c.rationale = p.rationale;
  std::vector<store::LlmCallRow> calls{call_row(s, p, "")};
  if (p.verifier) calls.push_back(verifier_call_row(s, *p.verifier));
  auto stored = record(s, std::move(c), calls);
  if (!stored) return stored.unexpected();
  if (p.verifier) s.emit(results::kVerifierEvent, p.verifier->to_json(stored->id));
  if (s.ens) {
    bool improved = is_valid(*stored) && stored->speedup > p.job.parent_speedup;
    s.ens->reward(stored->model, improved ? 1.0 : 0.0);
  }
  if (!repair_feedback.empty() && s.opts.strategy.repair_rounds > 0)
    queue_repair(s, *stored, repair_source, repair_feedback);
  return {};
}

store::LlmCallRow call_row(const RunState& s, const Proposal& p, const std::string& error) {
  store::LlmCallRow c;
  c.run_id = s.row.id;
  c.model = p.llm_ok ? p.response.model : (s.llm ? s.llm->name() : "");
  c.purpose = to_string(p.job.op);
  c.input_tokens = p.response.usage.input_tokens;
  c.output_tokens = p.response.usage.output_tokens;
  c.cost_usd = p.response.cost_usd;
  c.latency_s = p.response.latency_s;
  c.from_cache = p.response.from_cache;
  c.error = error;
  return c;
}

}  // namespace kevo::evolve
