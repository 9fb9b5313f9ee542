// The session's tool calls (kernel_session.h): compile, evaluate, profile, submit, history.
#include <algorithm>

#include <fmt/format.h>

#include "agent/kernel_session.h"
#include "agent/verdict_view.h"
#include "check/profile_diagnosis.h"
#include "evolve/stored_verdict.h"
#include "util/fs.h"

namespace kevo::agent {

using nlohmann::json;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

json profile_json(const Profile& p) {
  json j = {{"status", p.to_json().value("status", "")}};
  if (!p.note.empty()) j["note"] = p.note;
  if (!p.kernels.empty()) {
    j["diagnosis"] = diagnose_profile(p);
    j["kernels"] = p.to_json().value("kernels", json::array());
  }
  return j;
}

}  // namespace

ToolResultOr<json> KernelSession::compile(const std::string& source) {
  if (auto e = check_source(source)) return *e;
  const CallKind kind{.compile = true};
  if (auto e = reserve(kind)) return *e;
  auto r = check(source, evolve::EpisodeCall::kCompile, "", "");
  release(kind, 0);
  if (!r) return ToolError{r.error().message, std::nullopt};
  return compile_view(r->verdict, task_, private_paths());
}

// Where a kernel is checked: by the search that owns this episode (through its broker), or here,
// recorded in the session's own run.
Result<evolve::EpisodeResult> KernelSession::check(const std::string& source, evolve::EpisodeCall call,
                                                   const std::string& name, const std::string& idea) {
  if (!opts_.broker) return check_here(source, call, name, idea);
  evolve::EpisodeRequest q{call, source, name, idea, opts_.parents, opts_.model, opts_.episode, turn_};
  {
    std::lock_guard lock(mu_);
    if (!attempts_.empty()) q.parents = {attempts_.back().candidate};
    if (q.turn == 0) q.turn = static_cast<int>(attempts_.size()) + 1;
    if (!client_.empty() && q.model.empty()) q.model = client_;
  }
  return opts_.broker->call(std::move(q));
}

Result<evolve::EpisodeResult> KernelSession::check_here(const std::string& source, evolve::EpisodeCall call,
                                                        const std::string& name, const std::string& idea) {
  EvalOptions o = opts_.eval;
  o.visible_only = true;
  o.held_out_only = false;
  o.compile_only = call == evolve::EpisodeCall::kCompile;
  o.profile = call == evolve::EpisodeCall::kProfile;
  o.baseline_ms = ctx_.baseline_ms;
  o.baseline_gpu = ctx_.gpu;
  auto file = work_ / fmt::format("{}{}.cu", o.compile_only ? "compile" : "attempt", ++files_);
  evolve::EpisodeResult r;
  if (auto w = write_file_atomic(file, source); !w)
    r.verdict.set(Outcome::InfraError, Reason::kEvaluator, "the server could not write the source: " + w.error().message);
  else if (o.compile_only)
    r.verdict = ev_.evaluate(task_, file, o);  // compiling needs no GPU: it runs beside evaluations
  else {
    std::lock_guard eval(eval_mu_);
    r.verdict = ev_.evaluate(task_, file, o);
  }
  if (o.compile_only) return r;
  auto id = record(r.verdict, source, name, idea);
  if (!id) return fail("the attempt could not be recorded: {}", id.error().message);
  r.candidate = *id;
  return r;
}

ToolResultOr<Attempt> KernelSession::run_checker(const std::string& source, const std::string& tool,
                                                 const std::string& name, const std::string& idea, bool profile) {
  if (auto e = check_source(source)) return *e;
  const CallKind kind{.needs_gpu = true};
  if (auto e = reserve(kind)) return *e;
  const auto t0 = std::chrono::steady_clock::now();
  // Released after the attempt is recorded, so a session that ends waits for the record too.
  struct Release {
    KernelSession* s;
    CallKind kind;
    std::chrono::steady_clock::time_point t0;
    ~Release() { s->release(kind, seconds_since(t0)); }
  } release_at_end{this, kind, t0};
  auto r = check(source, profile ? evolve::EpisodeCall::kProfile : evolve::EpisodeCall::kEvaluate, name, idea);
  if (!r) return ToolError{r.error().message, std::nullopt};
  const Verdict& v = r->verdict;
  Attempt a{r->candidate, 0, tool, source, name, kevo::stored_outcome(v.outcome)};
  a.view = verdict_view(v, task_, private_paths());
  if (v.outcome == Outcome::Pass && v.timing)
    a.speedup = v.timing->speedup.value, a.speedup_lo = v.timing->speedup.lo, a.speedup_hi = v.timing->speedup.hi;
  if (profile && v.profile) a.view["profile"] = profile_json(*v.profile);
  std::lock_guard lock(mu_);
  a.turn = turn_ ? turn_.load() : static_cast<int>(attempts_.size()) + 1;
  a.view["candidate"] = a.candidate;
  attempts_.push_back(a);
  return a;
}

ToolResultOr<Attempt> KernelSession::evaluate(const std::string& source, const std::string& name,
                                              const std::string& idea) {
  return run_checker(source, "evaluate", name, idea, false);
}

std::string KernelSession::source_of(int64_t candidate) const {
  std::lock_guard lock(mu_);
  for (const auto& a : attempts_)
    if (a.candidate == candidate && a.outcome == store::CandidateOutcome::kPass) return a.source;
  return {};
}

ToolResultOr<Attempt> KernelSession::profile(const std::string& source, int64_t candidate) {
  std::string src = source;
  if (src.empty()) src = source_of(candidate);
  if (src.empty())
    return ToolError{fmt::format("candidate {} is not a passing attempt of this session", candidate), std::nullopt};
  return run_checker(src, "profile", candidate ? fmt::format("profile of #{}", candidate) : "profile", "", true);
}

// The session's attempt with exactly this source, a passing one first; nullopt: none.
std::optional<Attempt> KernelSession::attempt_of(const std::string& source) const {
  std::lock_guard lock(mu_);
  std::optional<Attempt> found;
  for (const auto& a : attempts_)
    if (!source.empty() && a.source == source && (!found || a.outcome == store::CandidateOutcome::kPass)) found = a;
  return found;
}

ToolResultOr<json> KernelSession::submit(const std::string& source, int64_t candidate) {
  if (auto seen = attempt_of(source)) {
    if (seen->outcome == store::CandidateOutcome::kPass) return submit("", seen->candidate);
    // Judged already: running it again would change nothing.
    return ToolError{fmt::format("this source was evaluated as candidate #{}: {}; only a passing kernel can be "
                                 "submitted", seen->candidate, store::to_string(seen->outcome)),
                     std::nullopt};
  }
  if (!source.empty()) {  // a new source is evaluated first, as any attempt
    auto a = run_checker(source, "submit", "submitted", "", false);
    if (auto* e = std::get_if<ToolError>(&a)) return *e;
    const Attempt& at = std::get<Attempt>(a);
    if (at.outcome != store::CandidateOutcome::kPass) {
      json j = at.view;
      j["submitted"] = false;
      j["why"] = "it does not pass on the visible shapes, so it was not verified";
      return j;
    }
    candidate = at.candidate;
  }
  std::string src = source_of(candidate);
  if (src.empty())
    return ToolError{fmt::format("candidate {} is not a passing attempt of this session", candidate), std::nullopt};
  if (opts_.broker) return episode_answer(candidate);
  return verify(candidate, src);
}

// In a search, a submission names the episode's answer; the search verifies its best kernels on
// held-out shapes at its end, whichever episode found them.
ToolResultOr<json> KernelSession::episode_answer(int64_t candidate) {
  std::lock_guard lock(mu_);
  if (spent_.submissions >= opts_.budgets.submissions)
    return ToolError{budget_message(Budget::kSubmissions, opts_.budgets, spent_), Budget::kSubmissions};
  answer_ = candidate;
  ++spent_.submissions;
  return json{{"candidate", candidate},
          {"submitted", true},
          {"verified", false},
          {"message", "recorded as this episode's answer; the search verifies its best kernels on other shapes at its end"}};
}

// Held-out verification, as a search's winner gets it: the held-out configs only, fresh inputs,
// re-timed with the longer budget, against the baseline's figure from the session's start.
ToolResultOr<json> KernelSession::verify(int64_t candidate, const std::string& source) {
  const CallKind kind{.needs_gpu = true, .submission = true};
  if (auto e = reserve(kind)) return *e;
  EvalOptions o = opts_.eval;
  o.held_out_only = true;
  o.visible_only = false;
  o.time = true;
  o.time_budget_s = std::max(o.time_budget_s, opts_.verify_time_budget_s);
  o.seed.reset();
  o.torch_time = !task_.torch_reference.empty();
  o.profile = false;
  o.baseline_ms = ctx_.baseline_ms;
  o.baseline_gpu = ctx_.gpu;
  std::unique_lock eval(eval_mu_);
  const auto t0 = std::chrono::steady_clock::now();
  auto file = work_ / fmt::format("verify{}.cu", candidate);
  Verdict v;
  if (auto w = write_file_atomic(file, source); !w)
    v.set(Outcome::InfraError, Reason::kEvaluator, "the server could not write the source: " + w.error().message);
  else
    v = ev_.evaluate(task_, file, o);
  eval.unlock();
  const double gpu_s = seconds_since(t0);
  const bool pass = v.outcome == Outcome::Pass && v.timing;
  const double speedup = pass ? v.timing->speedup.value : 0, lo = pass ? v.timing->speedup.lo : 0;
  json attempt = {{"candidate", candidate},       {"outcome", outcome_name(v.outcome)}, {"reason", v.reason_text()},
                  {"message", v.message},         {"speedup", speedup},
                  {"speedup_ci", {lo, pass ? v.timing->speedup.hi : 0}}};
  std::unique_lock lock(mu_);
  verification_.push_back(attempt);
  const bool winner = pass && lo > 1.0;
  if (winner && speedup > winner_speedup_) winner_ = candidate, winner_speedup_ = speedup;
  row_.final_json = json{{"winner", winner_},
                         {"winner_speedup", winner_speedup_},
                         {"best_failed_held_out", false},
                         {"not_faster", winner_ == 0 && pass},
                         {"attempts", verification_}}
                        .dump();
  if (winner_) row_.best_candidate = winner_, row_.best_speedup = winner_speedup_;
  (void)db_->update_run(row_);  // kept now: a crash later loses no verified result
  lock.unlock();
  release(kind, gpu_s);
  json out = {{"candidate", candidate}, {"verified", pass}, {"winner", winner}, {"outcome", outcome_name(v.outcome)},
              {"reason", v.reason_text()}};
  if (pass) out["speedup"] = speedup, out["speedup_ci"] = attempt["speedup_ci"];
  if (!pass) out["message"] = v.outcome == Outcome::Incorrect ? evolve::held_out_failure_text() : scrub_text(v.message, task_, private_paths());
  if (pass && !winner) out["message"] = "correct on held-out shapes, but not faster than the baseline beyond noise";
  return out;
}

// What the agent may read of its submissions: a held-out failure's own words may name what it
// must not see.
json KernelSession::shown_verification() const {
  json out = json::array();
  for (json a : verification_) {
    a["message"] = a.value("outcome", "") == "incorrect" ? evolve::held_out_failure_text() : scrub_text(a.value("message", ""), task_, private_paths());
    out.push_back(std::move(a));
  }
  return out;
}

json KernelSession::history() const {
  std::lock_guard lock(mu_);
  json list = json::array();
  int64_t best = 0;
  double best_speedup = 0;
  for (const auto& a : attempts_) {
    list.push_back({{"candidate", a.candidate}, {"turn", a.turn}, {"tool", a.tool}, {"name", a.name},
                    {"outcome", store::to_string(a.outcome)}, {"reason", a.view.value("reason", "")},
                    {"speedup", a.speedup}});
    if (a.outcome == store::CandidateOutcome::kPass && a.speedup > best_speedup) best = a.candidate, best_speedup = a.speedup;
  }
  Spent s = spent_;
  s.wall_seconds = seconds_since(started_);
  return {{"attempts", list},
          {"best", {{"candidate", best}, {"speedup", best_speedup}}},
          {"submissions", shown_verification()},
          {"winner", winner_},
          {"spent", {{"evaluations", s.evaluations}, {"gpu_seconds", s.gpu_seconds}, {"wall_seconds", s.wall_seconds},
                     {"submissions", s.submissions}, {"compiles", s.compiles}}},
          {"budgets", opts_.budgets.to_json()}};
}

}  // namespace kevo::agent
