// The search's side of agent episodes (episode.h): an episode runs on a proposal thread, its
// attempts come through the broker to the pool like any evaluation, and their verdicts are
// recorded as candidates here, on the run's thread, before the episode hears them.
#include <algorithm>

#include <fmt/format.h>

#include "evolve/episode_phase.h"
#include "evolve/run_record.h"
#include "util/fs.h"

namespace kevo::evolve {

namespace {

using Reply = std::shared_ptr<std::promise<Result<EpisodeResult>>>;

// Whether the attempt was already judged (or is being judged): the episode hears so, nothing runs.
std::optional<std::string> repeat_of(const RunState& s, const EpisodeRequest& q, const std::string& fp) {
  if (q.call != EpisodeCall::kEvaluate) return std::nullopt;  // a profile re-runs a kernel on purpose
  if (auto dup = s.seen.find(fp); dup != s.seen.end())
    return dup->second == 0 ? std::string("the same program as the baseline (comments and whitespace aside): not evaluated")
                            : fmt::format("the same program as candidate #{} (comments and whitespace aside): not "
                                          "evaluated again", dup->second);
  if (s.evaluating.count(fp)) return std::string("the same program is being evaluated now");
  return std::nullopt;
}

Proposal attempt_proposal(const EpisodeRequest& q, const std::filesystem::path& file) {
  Proposal p;
  p.job.no = q.episode;
  p.job.op = Op::kAgent;
  p.job.parents = q.parents;
  p.name = q.name;
  p.rationale = q.idea;
  p.source = q.source;
  p.file = file;
  p.response.model = q.model;
  // Where in its episode the attempt was made; the prompt was the episode's.
  if (q.episode) p.response.text = q.turn ? fmt::format("episode {}, turn {}", q.episode, q.turn) : fmt::format("episode {}", q.episode);
  p.llm_ok = true;
  p.episode = true;
  return p;
}

// Evaluations in the pool that will be candidates (a speculative one is not, until claimed).
int judged_pending(const RunState& s) {
  return static_cast<int>(std::count_if(s.pending.begin(), s.pending.end(),
                                        [](const auto& e) { return !e.second.speculative; }));
}

// The run's candidate budget counts every attempt of every episode: past it, none is evaluated.
std::optional<std::string> candidates_spent(const RunState& s, const EpisodeRequest& q) {
  if (q.call == EpisodeCall::kCompile) return std::nullopt;
  const int used = s.seq + judged_pending(s);
  if (used < s.opts.budgets.max_candidates) return std::nullopt;
  return fmt::format("the run's candidate budget is spent ({} of {}): not evaluated", used, s.opts.budgets.max_candidates);
}

bool compiled(const Verdict& v) { return v.compile ? v.compile->ok : v.outcome != Outcome::CompileError; }

// A source an episode compiled cleanly, to evaluate before the model asks (once per program).
void queue_speculation(RunState& s, const Pending& pe, const Verdict& v) {
  if (!s.opts.strategy.episode.speculate || !compiled(v) || !s.stop.empty()) return;
  const std::string fp = s.ev.fingerprint(pe.proposal.source);
  if (s.seen.count(fp) || s.evaluating.count(fp) || s.speculations.count(fp)) return;
  s.speculations[fp] = Speculation{pe.proposal.source, pe.proposal.job.no};
  s.speculation_queue.push_back(fp);
}

// Speculative work takes a slot only while no model waits for one, leaves one free (where there
// are two or more) for the next call a model makes, so that call never queues behind it, and never
// takes a place of the candidate budget that a model's own evaluation would need.
bool may_speculate(const RunState& s) {
  const int slots = s.pool.slots(), in_pool = static_cast<int>(s.pending.size());
  return s.stop.empty() && !s.broker.closed() && !s.broker.has_waiting() && in_pool < slots &&
         in_pool - judged_pending(s) < std::max(1, slots - 1) && s.seq + in_pool < s.opts.budgets.max_candidates;
}

Status start_speculation(RunState& s, const std::string& fp, Speculation& sp) {
  EvalRequest r;
  r.ticket = s.next_ticket++;
  r.file = s.work_dir / fmt::format("speculative{}.cu", r.ticket);
  r.source = sp.source;
  KEVO_TRY(write_file_atomic(r.file, sp.source));
  r.opts = search_options(s);
  Proposal p;
  p.job.no = sp.episode;
  p.job.op = Op::kAgent;
  p.source = sp.source;
  p.file = r.file;
  p.episode = true;
  sp.ticket = r.ticket;
  const int64_t ticket = r.ticket;
  KEVO_TRY(s.pool.submit(std::move(r)));
  s.pending.emplace(ticket, Pending{std::move(p), fp, nullptr, EpisodeCall::kEvaluate, true});
  ++s.speculation.started;
  return {};
}

Status start_speculations(RunState& s) {
  while (!s.speculation_queue.empty() && may_speculate(s)) {
    const std::string fp = s.speculation_queue.front();
    s.speculation_queue.pop_front();
    auto it = s.speculations.find(fp);
    if (it == s.speculations.end()) continue;
    if (!start_speculation(s, fp, it->second)) {  // its file could not be written: it is not worth a stop
      s.speculations.erase(it);
      ++s.speculation.dropped;
    }
  }
  return {};
}

// An evaluate of a program speculation started: it joins that evaluation instead of starting
// another, and is recorded as a candidate like any attempt before the model hears it. nullopt:
// nothing to join (one still waiting for a slot is dropped, and the call runs as asked).
std::optional<Status> claim_speculation(RunState& s, const EpisodeRequest& q, const std::string& fp,
                                        const Reply& reply) {
  auto it = s.speculations.find(fp);
  if (q.call != EpisodeCall::kEvaluate || it == s.speculations.end()) return std::nullopt;
  Speculation sp = std::move(it->second);
  s.speculations.erase(it);
  if (sp.ticket == 0) {
    std::erase(s.speculation_queue, fp);
    ++s.speculation.dropped;
    return std::nullopt;
  }
  Proposal p = attempt_proposal(q, s.work_dir / fmt::format("speculative{}.cu", sp.ticket));
  if (sp.done) {
    ++s.speculation.used_ready;
    return complete_episode_attempt(s, Pending{std::move(p), fp, reply, EpisodeCall::kEvaluate}, *sp.done);
  }
  Pending& pe = s.pending.at(sp.ticket);
  pe.proposal = std::move(p);
  pe.reply = reply;
  pe.speculative = false;
  s.evaluating.insert(fp);
  ++s.speculation.used_running;
  return Status{};
}

void waste(RunState& s, const Speculation& sp) {
  if (sp.ticket == 0) {
    ++s.speculation.dropped;
    return;
  }
  ++s.speculation.wasted;
  s.speculation.wasted_gpu_s += sp.busy_s;
}

// A finished episode's speculation nobody claimed: wasted, or dropped if it never started; one
// still running is wasted once it finishes (another episode may still claim it meanwhile).
void end_speculations(RunState& s, int64_t episode) {
  for (auto it = s.speculations.begin(); it != s.speculations.end();) {
    Speculation& sp = it->second;
    if (sp.episode != episode || (sp.ticket && !sp.done)) {
      sp.orphan = sp.orphan || sp.episode == episode;
      ++it;
      continue;
    }
    if (sp.ticket == 0) std::erase(s.speculation_queue, it->first);
    waste(s, sp);
    it = s.speculations.erase(it);
  }
}

Status submit_attempt(RunState& s, EpisodeBroker::Waiting w) {
  auto reply = std::make_shared<std::promise<Result<EpisodeResult>>>(std::move(w.reply));
  const EpisodeRequest& q = w.request;
  const std::string fp = s.ev.fingerprint(q.source);
  if (auto why = repeat_of(s, q, fp)) {
    reply->set_value(fail("{}", *why));
    return {};
  }
  if (auto spent = candidates_spent(s, q)) {
    reply->set_value(fail("{}", *spent));
    s.stop_with(store::StopKind::kBudgetCandidates, false);
    s.broker.close(*spent);
    return {};
  }
  if (auto joined = claim_speculation(s, q, fp, reply)) return *joined;
  EvalRequest r;
  r.ticket = s.next_ticket++;
  r.file = s.work_dir / fmt::format("episode{}.cu", r.ticket);
  r.source = q.source;
  if (auto st = write_file_atomic(r.file, q.source); !st) {
    reply->set_value(st.unexpected());
    return {};
  }
  r.opts = search_options(s);
  r.opts.profile = q.call == EpisodeCall::kProfile;
  r.opts.compile_only = q.call == EpisodeCall::kCompile;
  const int64_t ticket = r.ticket;
  Proposal p = attempt_proposal(q, r.file);
  KEVO_TRY(s.pool.submit(std::move(r)));
  const bool judged = q.call == EpisodeCall::kEvaluate;
  if (judged) s.evaluating.insert(fp);
  s.pending.emplace(ticket, Pending{std::move(p), judged ? fp : std::string(), reply, q.call});
  return {};
}

}  // namespace

Status feed_episode_attempts(RunState& s, const std::function<bool()>& slot_free) {
  if (!s.stop.empty()) s.broker.close(fmt::format("the run is stopping ({}): no more evaluations", s.stop.text()));
  // An evaluate that joins a speculative evaluation needs no slot: it is answered even when none is free.
  auto joins = [&s](const EpisodeRequest& q) {
    if (q.call != EpisodeCall::kEvaluate) return false;
    auto it = s.speculations.find(s.ev.fingerprint(q.source));
    return it != s.speculations.end() && it->second.ticket != 0;
  };
  while (auto w = slot_free() ? s.broker.take() : s.broker.take_first(joins)) KEVO_TRY(submit_attempt(s, std::move(*w)));
  return start_speculations(s);  // only into what the calls models wait on left free
}

Status complete_episode_attempt(RunState& s, Pending pe, const Verdict& v) {
  if (pe.call == EpisodeCall::kCompile) {
    // Started before the episode hears its compile, so the evaluate it may send next joins it.
    queue_speculation(s, pe, v);
    const Status started = start_speculations(s);
    pe.reply->set_value(EpisodeResult{v, 0});
    return started;
  }
  store::CandidateRow c = row_from_verdict(v, pe.proposal.source);
  c.op = to_string(Op::kAgent);
  c.parents = pe.proposal.job.parents;
  c.model = pe.proposal.response.model;
  c.name = pe.proposal.name;
  c.rationale = pe.proposal.rationale;
  c.prompt = pe.proposal.response.text;
  auto stored = record(s, std::move(c), {});
  if (!stored) {
    pe.reply->set_value(stored.unexpected());
    return stored.unexpected();
  }
  ++s.episode_candidates[pe.proposal.job.no];
  pe.reply->set_value(EpisodeResult{v, stored->id});
  return {};
}

Proposal run_episode(RunState& s, Job j) {
  EpisodeOutcome o = s.episodes->run(j, s.ctx, s.broker, s.inner_cancel);
  Proposal p;
  p.job = std::move(j);
  p.episode = true;
  p.llm_ok = o.ok;
  p.llm_error = o.error;
  p.error_kind = o.fatal ? llm::ErrorKind::kFatal : llm::ErrorKind::kOther;
  p.response.model = o.model.empty() ? s.episodes->name() : o.model;
  p.response.cost_usd = o.cost_usd;
  p.response.usage.input_tokens = o.input_tokens;
  p.response.usage.output_tokens = o.output_tokens;
  p.name = o.answer ? fmt::format("episode (answer #{})", o.answer) : "episode";
  p.rationale = o.summary;
  p.episode_account = {o.charged_tokens, o.charged_usd, std::move(o.record)};
  return p;
}

Status account_episode(RunState& s, const Proposal& p) {
  end_speculations(s, p.job.no);
  store::LlmCallRow c = call_row(s, p, p.llm_ok ? "" : p.llm_error);
  c.model = p.response.model;
  c.purpose = to_string(Op::kAgent);
  nlohmann::json e = p.episode_account.record;
  e.update({{"episode", p.job.no}, {"ok", p.llm_ok}, {"model", p.response.model}, {"summary", p.rationale},
            {"error", p.llm_error}, {"cost_usd", p.response.cost_usd},
            {"input_tokens", p.response.usage.input_tokens}, {"output_tokens", p.response.usage.output_tokens}});
  s.emit("episode", e);
  ++s.calls;
  s.broker.settle(p.episode_account.charged_tokens, p.episode_account.charged_usd);
  s.tokens += p.response.usage.total();
  s.cost += p.response.cost_usd;
  s.broker.set_spend({s.opts.budgets.max_tokens, s.opts.budgets.max_usd}, s.tokens, s.cost);
  KEVO_TRY(s.db.add_llm_call(c));
  // An episode that added no candidate (every attempt refused or a repeat) did nothing for the
  // search: as many in a row as failed calls stop the run, so it cannot spin.
  const int added = s.episode_candidates[p.job.no];
  s.episode_candidates.erase(p.job.no);
  // A fatal error (a bad key, a request the API refuses) stops the run even after an episode's
  // first turns worked: the next episode would fail the same way.
  if (p.error_kind == llm::ErrorKind::kFatal) {
    s.stop_with(store::StopKind::kLlmFatal, true, p.llm_error);
  } else if (p.llm_ok && added == 0) {
    if (++s.llm_fail_in_row >= s.opts.max_llm_failures_in_row)
      s.stop_with(store::StopKind::kLlmFailures, false,
                  fmt::format("{} episodes in a row added no candidate, last: {}", s.llm_fail_in_row, p.rationale));
  } else if (p.llm_ok) {
    s.llm_fail_in_row = 0;
  } else if (++s.llm_fail_in_row >= s.opts.max_llm_failures_in_row) {
    s.stop_with(store::StopKind::kLlmFailures, false, fmt::format("{} in a row, last: {}", s.llm_fail_in_row, p.llm_error));
  }
  return {};
}

void complete_speculation(RunState& s, const Pending& pe, const Verdict& v, double busy_s) {
  auto it = s.speculations.find(pe.fingerprint);
  if (it == s.speculations.end() || it->second.orphan) {
    ++s.speculation.wasted;
    s.speculation.wasted_gpu_s += busy_s;
    if (it != s.speculations.end()) s.speculations.erase(it);
    return;
  }
  it->second.done = v;
  it->second.busy_s = busy_s;
}

void leave_speculation(RunState& s, const Pending& pe) {
  ++s.speculation.wasted;
  s.speculations.erase(pe.fingerprint);
}

void finish_speculation(RunState& s) {
  for (const auto& [fp, sp] : s.speculations) waste(s, sp);
  s.speculations.clear();
  s.speculation_queue.clear();
  if (!s.episodes) return;
  const SpeculationCounts& c = s.speculation;
  s.emit("speculation", {{"enabled", s.opts.strategy.episode.speculate}, {"started", c.started},
                         {"used", c.used_ready + c.used_running}, {"used_ready", c.used_ready},
                         {"used_running", c.used_running}, {"wasted", c.wasted}, {"dropped", c.dropped},
                         {"wasted_gpu_s", c.wasted_gpu_s}});
}

}  // namespace kevo::evolve
