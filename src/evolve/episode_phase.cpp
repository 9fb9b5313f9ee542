// The search's side of agent episodes (episode.h): an episode runs on a proposal thread, its
// attempts come through the broker to the pool like any evaluation, and their verdicts are
// recorded as candidates here, on the run's thread, before the episode hears them.
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

// The run's candidate budget counts every attempt of every episode: past it, none is evaluated.
std::optional<std::string> candidates_spent(const RunState& s, const EpisodeRequest& q) {
  if (q.call == EpisodeCall::kCompile) return std::nullopt;
  const int used = s.seq + static_cast<int>(s.pending.size());
  if (used < s.opts.budgets.max_candidates) return std::nullopt;
  return fmt::format("the run's candidate budget is spent ({} of {}): not evaluated", used, s.opts.budgets.max_candidates);
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
  while (slot_free()) {
    auto w = s.broker.take();
    if (!w) return {};
    KEVO_TRY(submit_attempt(s, std::move(*w)));
  }
  return {};
}

Status complete_episode_attempt(RunState& s, Pending pe, const Verdict& v) {
  if (pe.call == EpisodeCall::kCompile) {
    pe.reply->set_value(EpisodeResult{v, 0});
    return {};
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

}  // namespace kevo::evolve
