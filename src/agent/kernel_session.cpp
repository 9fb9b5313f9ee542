#include "agent/kernel_session.h"

#include <algorithm>

#include <fmt/format.h>

#include "agent/verdict_view.h"
#include "evolve/run_record.h"
#include "evolve/stored_verdict.h"
#include "store/stop_reason.h"
#include "util/fs.h"

namespace kevo::agent {

using nlohmann::json;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

store::StopKind stop_kind(SessionEnd why) {
  switch (why) {
    case SessionEnd::kClientGone: return store::StopKind::kAgentClientGone;
    case SessionEnd::kShutdown: return store::StopKind::kAgentShutdown;
    case SessionEnd::kWallTime: return store::StopKind::kAgentWallTime;
    case SessionEnd::kError: return store::StopKind::kInfraError;
  }
  return store::StopKind::kOther;
}

}  // namespace

KernelSession::KernelSession(const Task& task, evolve::CandidateEvaluator& ev, store::RunDb* db, SessionOptions opts)
    : task_(task), ev_(ev), db_(db), opts_(std::move(opts)) {}

KernelSession::~KernelSession() { finish(SessionEnd::kShutdown, 0); }

Result<std::unique_ptr<KernelSession>> KernelSession::start(const Task& task, evolve::CandidateEvaluator& ev,
                                                            store::RunDb& db, SessionOptions opts) {
  std::unique_ptr<KernelSession> s(new KernelSession(task, ev, &db, std::move(opts)));
  KEVO_TRY(s->open_run());
  return s;
}

std::unique_ptr<KernelSession> KernelSession::start_episode(const Task& task, evolve::CandidateEvaluator& ev,
                                                            SessionOptions opts) {
  std::unique_ptr<KernelSession> s(new KernelSession(task, ev, nullptr, std::move(opts)));
  s->ctx_ = *s->opts_.context;
  s->client_ = s->opts_.model;
  return s;
}

int64_t KernelSession::answer() const {
  std::lock_guard lock(mu_);
  return answer_;
}

int KernelSession::attempts() const {
  std::lock_guard lock(mu_);
  return static_cast<int>(attempts_.size());
}

Status KernelSession::open_run() {
  row_.task = task_.name;
  row_.task_dir = std::filesystem::absolute(task_.dir).string();
  row_.strategy = opts_.strategy;
  row_.config_json = json{{"budgets", opts_.budgets.to_json()},        {"eval_seeds", opts_.eval.seeds},
                          {"eval_time_budget_s", opts_.eval.time_budget_s}, {"verify_time_budget_s", opts_.verify_time_budget_s},
                          {"fake_evaluator", ev_.is_fake()},           {"launch", opts_.launch}}
                         .dump();
  row_.note = "an agent's session over kevo's tools";
  auto id = db_->create_run(row_);
  if (!id) return id.unexpected();
  row_.id = *id;
  work_ = opts_.work_dir.empty() ? store::default_work_dir(*db_) : opts_.work_dir;
  work_ /= fmt::format("run-{}", row_.id);
  std::error_code ec;
  std::filesystem::create_directories(work_, ec);
  if (ec) return fail("cannot create the session's work folder {}: {}", work_.string(), ec.message());
  EvalOptions bo = opts_.eval;
  bo.baseline_mode = true;
  Verdict base = ev_.evaluate_baseline(task_, bo);
  row_.baseline_json = kevo::stored_baseline(base, ev_.is_fake()).to_json().dump();
  if (base.outcome != Outcome::Pass) {
    row_.status = store::RunStatus::kFailed;
    row_.stop_reason = store::StopReason{store::StopKind::kBaselineFailed, {}}.text();
    (void)db_->update_run(row_);
    finished_ = true;
    return fail("the task's baseline failed its own check ({}): {}", base.reason_text(), base.message);
  }
  ctx_ = evolve::make_task_context(task_, base, ev_.cuda_version(), evolve::load_abi_text());
  return db_->update_run(row_);
}

void KernelSession::set_client(const std::string& name, const std::string& version) {
  std::lock_guard lock(mu_);
  if (opts_.broker) return;  // an episode's attempts carry the search's name for its agent
  client_ = version.empty() ? name : name + " " + version;
  if (client_.empty()) client_ = "mcp client";
}

std::vector<std::string> KernelSession::private_paths() const {
  std::vector<std::string> paths{std::filesystem::absolute(task_.dir).string()};
  if (!work_.empty()) paths.push_back(work_.string());
  if (db_) paths.push_back(db_->where());
  return paths;
}

json KernelSession::task_view() const {
  return {{"name", ctx_.task_name},         {"description", ctx_.description}, {"interface", ctx_.signature},
          {"abi", ctx_.abi_text},           {"gpu", ctx_.gpu},                 {"arch", ctx_.arch},
          {"cuda", ctx_.cuda_version},      {"shapes", ctx_.shapes},           {"baseline_source", ctx_.baseline_code},
          {"baseline_ms", ctx_.baseline_ms}, {"sol_floor_ms", ctx_.sol_floor_ms}, {"sol_bound", ctx_.sol_bound},
          {"baseline_profile", ctx_.baseline_diagnosis}, {"budgets", opts_.budgets.to_json()}};
}

std::optional<ToolError> KernelSession::check_source(const std::string& source) const {
  if (source.find_first_not_of(" \t\r\n") == std::string::npos) return ToolError{"the source is empty", std::nullopt};
  if (source.size() > opts_.budgets.source_bytes)
    return ToolError{fmt::format("the source is {} bytes; the limit is {} bytes", source.size(), opts_.budgets.source_bytes),
                     std::nullopt};
  return std::nullopt;
}

std::optional<ToolError> KernelSession::reserve(CallKind kind) {
  std::lock_guard lock(mu_);
  if (finished_) return ToolError{"the session has ended", std::nullopt};
  spent_.wall_seconds = seconds_since(started_);
  if (auto b = over_budget(opts_.budgets, spent_, kind)) return ToolError{budget_message(*b, opts_.budgets, spent_), b};
  if (kind.compile) ++spent_.compiles;
  if (kind.needs_gpu) {
    ++spent_.in_flight;
    ++(kind.submission ? spent_.submissions : spent_.evaluations);
  }
  ++calls_in_flight_;
  return std::nullopt;
}

void KernelSession::release(CallKind kind, double gpu_s) {
  std::lock_guard lock(mu_);
  if (kind.needs_gpu) {
    spent_.gpu_seconds += gpu_s;
    --spent_.in_flight;
  }
  --calls_in_flight_;
  idle_.notify_all();
}

Spent KernelSession::spent() const {
  std::lock_guard lock(mu_);
  Spent s = spent_;
  s.wall_seconds = seconds_since(started_);
  return s;
}

bool KernelSession::expired() const {
  std::lock_guard lock(mu_);
  return seconds_since(started_) >= opts_.budgets.wall_seconds && calls_in_flight_ == 0;
}

Result<int64_t> KernelSession::record(const Verdict& v, const std::string& source, const std::string& name,
                                      const std::string& idea) {
  store::CandidateRow c = evolve::row_from_verdict(v, source);
  std::lock_guard lock(mu_);
  if (finished_) return fail("the session ended while this call ran (the server was stopped)");
  c.run_id = row_.id;
  c.seq = static_cast<int>(attempts_.size()) + 1;
  c.op = "agent";
  if (!attempts_.empty()) c.parents = {attempts_.back().candidate};  // the session's turns, in order
  c.model = client_;
  c.name = name;
  c.rationale = idea;
  c.accepted = c.passed() && c.speedup > row_.best_speedup;
  KEVO_TRY(db_->add_candidate(c));
  if (c.accepted) {
    row_.best_candidate = c.id;
    row_.best_speedup = c.speedup;
    KEVO_TRY(db_->update_run(row_));
  }
  return c.id;
}

void KernelSession::finish(SessionEnd why, int protocol_errors, std::chrono::milliseconds wait) {
  std::unique_lock lock(mu_);
  // What is running is finished and recorded, unless the process must end sooner.
  const bool idle = wait == std::chrono::milliseconds::max()
                        ? (idle_.wait(lock, [&] { return calls_in_flight_ == 0; }), true)
                        : idle_.wait_for(lock, wait, [&] { return calls_in_flight_ == 0; });
  if (finished_) return;
  finished_ = true;
  if (!db_) return;  // an episode: the search records its attempts and its end
  const bool failed = why == SessionEnd::kError;
  row_.status = failed ? store::RunStatus::kFailed : idle ? store::RunStatus::kFinished : store::RunStatus::kInterrupted;
  row_.stop_reason = store::StopReason{stop_kind(why), {}}.text();
  if (winner_ != 0) row_.best_candidate = winner_, row_.best_speedup = winner_speedup_;
  row_.note += fmt::format("; {} attempt(s), {}", attempts_.size(),
                           winner_ ? fmt::format("winner #{} verified on held-out shapes", winner_)
                           : row_.best_candidate ? fmt::format("best #{} not verified (never submitted or failed)", row_.best_candidate)
                                                 : std::string("none passed"));
  if (!idle) row_.note += fmt::format("; {} call(s) in flight abandoned when the server stopped", calls_in_flight_);
  (void)db_->update_run(row_);
  (void)db_->add_event(row_.id, "finished",
                      json{{"status", store::to_string(row_.status)}, {"stop_reason", row_.stop_reason},
                           {"attempts", attempts_.size()}, {"winner", winner_}, {"protocol_errors", protocol_errors},
                           {"abandoned", idle ? 0 : calls_in_flight_}}
                          .dump());
}

}  // namespace kevo::agent
