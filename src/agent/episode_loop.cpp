#include "agent/episode_loop.h"

#include <fmt/format.h>

#include <future>

#include "llm/errors.h"
#include "util/enum_text.h"

namespace kevo::agent {

using nlohmann::json;

namespace {

constexpr EnumText<EpisodeEnd> kEndTexts[] = {
    {EpisodeEnd::kSubmitted, "submitted"},       {EpisodeEnd::kNoToolCall, "no_tool_call"},
    {EpisodeEnd::kTurns, "turns"},               {EpisodeEnd::kTokens, "tokens"},
    {EpisodeEnd::kEvaluations, "evaluations"},   {EpisodeEnd::kWallTime, "wall_time"},
    {EpisodeEnd::kMalformed, "malformed_calls"}, {EpisodeEnd::kRunBudget, "run_budget"},
    {EpisodeEnd::kRunStopping, "run_stopping"},  {EpisodeEnd::kModelError, "model_error"},
};

std::string clip(const std::string& s, size_t n) { return s.size() <= n ? s : s.substr(0, n) + "..."; }

const char* kNudge =
    "Nothing written as text is read. Use the tools: `evaluate` a kernel, and `submit` your best passing candidate.";

const char* kSubmitNow = "This episode's evaluations are spent: submit your best passing candidate now.";

}  // namespace

const char* to_string(EpisodeEnd e) { return enum_text(kEndTexts, e); }

llm::ChatRequest episode_request(const evolve::Job& job, const evolve::EpisodeLimits& limits) {
  std::string how = fmt::format(
      "\n\n## How to answer in this episode\n"
      "Ignore any answer format above: you work through tools, and nothing you write as text is read. `task` gives "
      "the task, the kernel ABI, the shapes and the baseline; `compile` reports diagnostics and registers; `evaluate` "
      "checks a kernel on the visible shapes with fresh inputs and times it against the baseline (every call is one "
      "of the search's candidates); `profile` adds Nsight Compute's view of a passing candidate; `history` lists your "
      "attempts; `submit` names your answer (a passing candidate) and ends the episode. It may take {} turns and {} "
      "evaluations; if it ends without a submission, its fastest passing kernel is its answer.\n",
      limits.turns, limits.evaluations);
  llm::ChatRequest r = llm::ChatRequest::user(job.prompt.user + how, job.prompt.system);
  r.cache_tag = fmt::format("job{}-episode", job.no);
  return r;
}

EpisodeLoop::EpisodeLoop(KernelTools& tools, llm::LlmClient& llm, evolve::EpisodeBroker& broker,
                         const llm::CancelToken& cancel, const LlmEpisodeOptions& o)
    : tools_(tools), llm_(llm), broker_(broker), cancel_(cancel), o_(o), specs_(tools.tools()) {}

evolve::EpisodeOutcome EpisodeLoop::run(const evolve::Job& job) {
  req_ = episode_request(job, o_.limits);
  req_.tools = tool_defs(specs_);
  while (take_turn()) {
  }
  return outcome();
}

std::optional<EpisodeEnd> EpisodeLoop::limit_before_turn() const {
  const double minutes = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count() / 60;
  if (cancel_.cancelled() || broker_.closed()) return EpisodeEnd::kRunStopping;
  if (!broker_.can_spend()) return EpisodeEnd::kRunBudget;
  if (turn_ >= o_.limits.turns) return EpisodeEnd::kTurns;
  if (in_ + out_ >= o_.limits.tokens) return EpisodeEnd::kTokens;
  if (minutes >= o_.limits.minutes) return EpisodeEnd::kWallTime;
  if (told_spent_ > 1) return EpisodeEnd::kEvaluations;
  return std::nullopt;
}

bool EpisodeLoop::take_turn() {
  if (auto lim = limit_before_turn()) {
    end_ = *lim;
    if (end_ == EpisodeEnd::kRunStopping) end_detail_ = broker_.closed().value_or("cancelled");
    if (end_ == EpisodeEnd::kRunBudget) end_detail_ = broker_.can_spend().error().message;
    return false;
  }
  tools_.session().set_turn(++turn_);
  auto r = llm_.chat(req_, cancel_);
  if (!r) {
    const llm::ErrorKind kind = llm::error_kind(r.error());
    end_ = kind == llm::ErrorKind::kCancelled ? EpisodeEnd::kRunStopping
           : kind == llm::ErrorKind::kBudget  ? EpisodeEnd::kRunBudget
                                              : EpisodeEnd::kModelError;
    fatal_ = kind == llm::ErrorKind::kFatal;
    end_detail_ = r.error().message;
    turns_.push_back({{"turn", turn_}, {"error", end_detail_}});
    return false;
  }
  in_ += r->usage.input_tokens, out_ += r->usage.output_tokens, usd_ += r->cost_usd;
  charged_ += r->usage.total();
  const Status charged = broker_.charge(r->usage.total(), r->cost_usd);
  json t = {{"turn", turn_},   {"input_tokens", r->usage.input_tokens}, {"output_tokens", r->usage.output_tokens},
            {"usd", r->cost_usd}, {"text", clip(r->text, 400)},         {"calls", json::array()}};
  req_.messages.push_back({llm::Role::kAssistant, r->text, r->tool_calls, {}});
  if (r->tool_calls.empty()) {
    ++idle_;
    req_.messages.push_back({llm::Role::kUser, kNudge, {}, {}});
  } else {
    idle_ = 0;
    run_calls(*r, t);
  }
  turns_.push_back(std::move(t));
  if (submitted_) end_ = EpisodeEnd::kSubmitted;
  else if (!charged) end_ = EpisodeEnd::kRunBudget, end_detail_ = charged.error().message;
  else if (malformed_ >= o_.malformed_calls) end_ = EpisodeEnd::kMalformed;
  else if (idle_ >= o_.idle_turns) end_ = EpisodeEnd::kNoToolCall;
  else return true;
  return false;
}

// The calls of one turn: evaluations, profiles and compiles at once (a model that sends several
// wants them all, and the pool may have a slot for each), then the others in the model's order
// (a submit may name a kernel evaluated in the same turn). Results keep the model's order.
std::vector<EpisodeLoop::TimedCall> EpisodeLoop::dispatch_turn(const std::vector<llm::ToolCall>& calls) {
  std::vector<TimedCall> done(calls.size());
  auto one = [&](size_t i) {
    const auto t0 = std::chrono::steady_clock::now();
    done[i].call = dispatch_tool_call(tools_, specs_, calls[i]);
    done[i].seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  auto at_once = [&](size_t i) {
    const std::string& n = calls[i].name;
    return calls.size() > 1 && (n == "evaluate" || n == "profile" || n == "compile");
  };
  std::vector<std::future<void>> running;
  for (size_t i = 0; i < calls.size(); ++i)
    if (at_once(i)) running.push_back(std::async(std::launch::async, one, i));
  for (auto& f : running) f.get();
  for (size_t i = 0; i < calls.size(); ++i)
    if (!at_once(i)) one(i);
  return done;
}

void EpisodeLoop::run_calls(const llm::ChatResponse& r, json& turn) {
  llm::Message results{llm::Role::kUser, "", {}, {}};
  for (auto& [d, seconds] : dispatch_turn(r.tool_calls)) {
    ++calls_;
    malformed_ += d.malformed;
    tool_errors_ += !d.malformed && d.result.is_error;
    if (d.tool == "submit" && !d.result.is_error) submitted_ = true;
    json call = {{"tool", d.tool},
                 {"arguments", d.shown_arguments},
                 {"error", d.result.is_error},
                 {"malformed", d.malformed},
                 {"result", clip(d.result.content, 300)},
                 {"seconds", seconds}};  // the call's wall time, waiting for the evaluation pool included
    for (const char* k : {"candidate", "outcome", "speedup"})
      if (d.structured.is_object() && d.structured.contains(k)) call[k] = d.structured[k];
    turn["calls"].push_back(std::move(call));
    results.tool_results.push_back(std::move(d.result));
  }
  const auto& b = tools_.session().budgets();
  if (!submitted_ && tools_.session().spent().evaluations >= b.evaluations && told_spent_++ == 0)
    results.content = kSubmitNow;
  req_.messages.push_back(std::move(results));
}

evolve::EpisodeOutcome EpisodeLoop::outcome() const {
  evolve::EpisodeOutcome o;
  KernelSession& ks = tools_.session();
  o.model = llm_.name();
  o.ok = !(end_ == EpisodeEnd::kModelError && calls_ == 0);
  o.fatal = fatal_;
  if (!o.ok || o.fatal) o.error = end_detail_;
  o.cost_usd = usd_, o.input_tokens = in_, o.output_tokens = out_;
  o.charged_tokens = charged_, o.charged_usd = usd_;
  const json h = ks.history();
  o.answer = ks.answer() ? ks.answer() : h["best"].value("candidate", int64_t{0});
  const int evaluations = ks.spent().evaluations;
  o.summary = fmt::format("{} after {} turn(s){}: {} tool call(s) ({} malformed, {} refused), {} evaluation(s), {}",
                          to_string(end_), turn_, end_detail_.empty() ? "" : " (" + clip(end_detail_, 160) + ")",
                          calls_, malformed_, tool_errors_, evaluations,
                          ks.answer()  ? fmt::format("answer #{} submitted", o.answer)
                          : o.answer ? fmt::format("no submission: its best passing #{} is its answer", o.answer)
                                     : std::string("no passing kernel"));
  o.record = {{"turns", turns_},          {"end", to_string(end_)},   {"end_detail", end_detail_},
              {"turn_count", turn_},      {"tool_calls", calls_},     {"malformed_calls", malformed_},
              {"tool_errors", tool_errors_}, {"evaluations", evaluations}, {"answer", o.answer},
              {"submitted", ks.answer() != 0}};
  return o;
}

}  // namespace kevo::agent
