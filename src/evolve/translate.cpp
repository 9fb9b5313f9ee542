#include "evolve/translate.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compile/cache.h"
#include "evolve/features.h"
#include "evolve/prompts.h"
#include "evolve/stored_verdict.h"
#include "store/stop_reason.h"
#include "evolve/task_context.h"
#include "llm/errors.h"
#include "llm/parse_answer.h"
#include "util/fs.h"

namespace kevo::evolve {

using nlohmann::json;

std::string translate_needs_model_note() {
  return "translating a PyTorch reference into a first kernel needs a model: configure one with --model "
         "(e.g. --model anthropic:claude-sonnet-4-5 with ANTHROPIC_API_KEY set, or --model "
         "http://localhost:8000/v1#qwen2.5-coder-32b for a local server) or an [llm] table in --config; "
         "see docs/LLM.md. Or write TASK/baseline.cu by hand (docs/ABI.md).";
}

namespace {

std::string clip(std::string s, size_t n) {
  if (s.size() > n) s = s.substr(0, n) + "\n[... trimmed]";
  return s;
}

std::string first_mismatch(const Verdict& v) {
  for (const auto& c : v.configs)
    if (!c.ok && !c.detail.empty()) return c.detail;
  return v.message;
}

// What goes back to the model for a failed verdict (held-out names scrubbed, trimmed).
std::string feedback_of(const Verdict& v, const Task& task) {
  std::string f;
  switch (v.outcome) {
    case Outcome::CompileError:
      f = "The compiler said:\n" + (v.compile && !v.compile->diagnostics.empty() ? v.compile->diagnostics : v.message);
      break;
    case Outcome::Incorrect:
      f = "The kernel compiled but produced wrong results. First mismatch:\n" + first_mismatch(v);
      break;
    default:
      f = fmt::format("The checker rejected the kernel: {} ({}): {}", outcome_name(v.outcome), v.reason_text(), v.message);
  }
  return clip(scrub_held_out(std::move(f), task), 4000);
}

// Writes baseline.cu atomically. Without `force` it never replaces a file, not even one that
// appeared while the model was thinking: the text goes to a temporary file that is then
// hard-linked into place (link(2) fails on an existing name).
Status write_baseline(const std::filesystem::path& dest, const std::string& text, bool force) {
  if (force) return write_file_atomic(dest, text);
  auto tmp = dest;
  tmp += fmt::format(".translate-{}.tmp", ::getpid());
  KEVO_TRY(write_file_atomic(tmp, text));
  int rc = ::link(tmp.c_str(), dest.c_str());
  int err = errno;
  std::error_code ec;
  if (rc != 0 && err != EEXIST && !std::filesystem::exists(dest, ec)) {
    // A file system without hard links: rename is still atomic; the window is the check above.
    std::filesystem::rename(tmp, dest, ec);
    if (ec) return fail("cannot write {}: {}", dest.string(), ec.message());
    return {};
  }
  std::filesystem::remove(tmp, ec);
  if (rc != 0)
    return fail("{}: {}", dest.string(),
                err == EEXIST ? "appeared while translating; not overwritten (use --force)" : std::strerror(err));
  return {};
}

std::string provenance(const Task& task, const std::string& model, int64_t run, int round, bool fake) {
  // A fake translation's baseline sits where real runs read it: it must not claim a check.
  if (fake)
    return fmt::format(
        "// Translated from {} by `kevo translate --fake-gpu` (model {}, run {}, round {}): NEVER CHECKED, the\n"
        "// fake evaluator ran nothing. `kevo eval TASK --baseline` checks it; `kevo translate TASK --force`\n"
        "// replaces it.\n",
        task.torch_reference, model, run, round);
  return fmt::format(
      "// Translated from {} by `kevo translate` (model {}, run {}, round {}); checked against the\n"
      "// task's oracle on its visible and held-out shapes before being written as the baseline.\n",
      task.torch_reference, model, run, round);
}

}  // namespace

namespace {

// What one round's kernel came to.
struct RoundResult {
  store::CandidateRow row;
  bool passed = false;
  bool infra = false;      // the checker could not run it: nothing to tell the model
  std::string feedback;    // for the next round
};

// One translation in progress: its run row, work folder and the rounds' state.
class Translation {
 public:
  Translation(const Task& task, CandidateEvaluator& evaluator, store::RunDb& db, llm::LlmClient& llm,
              const llm::CancelToken& cancel, const TranslateOptions& opts)
      : task_(task), ev_(evaluator), db_(db), llm_(llm), cancel_(cancel), opts_(opts) {}

  Result<TranslateOutcome> run(const std::string& torch_src);

 private:
  Status start();
  Result<TranslateOutcome> finish(TranslateStatus st, std::string message);
  RoundResult check(const std::string& code, int round);
  Result<bool> record(RoundResult& rr, const llm::ChatResponse& r, const Prompt& prompt, const std::string* code,
                      int round, const store::LlmCallRow& call);

  const Task& task_;
  CandidateEvaluator& ev_;
  store::RunDb& db_;
  llm::LlmClient& llm_;
  const llm::CancelToken& cancel_;
  const TranslateOptions& opts_;
  store::RunRow row_;
  std::filesystem::path work_;
  TranslateOutcome out_;
  int64_t previous_ = 0;  // the last kernel, the parent of the next
};

Status Translation::start() {
  row_.task = task_.name;
  row_.task_dir = std::filesystem::absolute(task_.dir).string();
  row_.strategy = "translate";
  row_.config_json = json{{"rounds", opts_.rounds},
                          {"force", opts_.force},
                          {"llm", llm_.name()},
                          {"eval_seeds", opts_.eval.seeds},
                          {"fake_evaluator", ev_.is_fake()}}
                         .dump();
  row_.note = "translation of " + task_.torch_reference + " into the kevo ABI";
  auto id = db_.create_run(row_);
  if (!id) return id.unexpected();
  row_.id = *id;
  out_.run_id = row_.id;
  work_ = opts_.work_dir;
  if (work_.empty()) work_ = store::default_work_dir(db_);
  work_ /= fmt::format("run-{}", row_.id);
  std::error_code ec;
  std::filesystem::create_directories(work_, ec);
  if (ec) return fail("cannot create {}: {}", work_.string(), ec.message());
  return {};
}

Result<TranslateOutcome> Translation::finish(TranslateStatus st, std::string message) {
  out_.status = st;
  out_.message = std::move(message);
  row_.status = st == TranslateStatus::kTranslated    ? store::RunStatus::kFinished
                : st == TranslateStatus::kInterrupted ? store::RunStatus::kInterrupted
                                                      : store::RunStatus::kFailed;
  using store::StopKind;
  const StopKind why = st == TranslateStatus::kTranslated        ? StopKind::kTranslated
                       : st == TranslateStatus::kRoundsExhausted ? StopKind::kTranslateRounds
                       : st == TranslateStatus::kLlmFailed       ? StopKind::kLlmFailed
                       : st == TranslateStatus::kInfraFailed     ? StopKind::kInfraError
                                                                 : StopKind::kInterrupted;
  row_.stop_reason = store::StopReason{why, ""}.text();
  if (!out_.message.empty()) row_.note += ": " + clip(out_.message, 2000);
  KEVO_TRY(db_.update_run(row_));
  (void)db_.add_event(row_.id, "finished",
                      json{{"status", store::to_string(row_.status)}, {"stop_reason", row_.stop_reason},
                           {"candidates", out_.attempts.size()}, {"baseline_candidate", out_.candidate}}
                          .dump());
  return out_;
}

// Checks the kernel on the visible shapes, then (if it passes) on the held-out ones.
RoundResult Translation::check(const std::string& code, int round) {
  RoundResult rr;
  auto file = work_ / fmt::format("translate{}.cu", round);
  if (auto w = write_file_atomic(file, code); !w) {
    rr.infra = true;
    rr.row.outcome = store::CandidateOutcome::kInfraError;
    rr.row.message = w.error().message;
    return rr;
  }
  EvalOptions o = opts_.eval;
  o.visible_only = true;
  o.held_out_only = false;
  o.baseline_mode = false;
  o.time = false;  // there is nothing to be faster than yet
  Verdict v = ev_.evaluate(task_, file, o);
  if (v.outcome == Outcome::Pass) {
    // The baseline must hold on the shapes the model never saw, too.
    EvalOptions h = o;
    h.visible_only = false;
    h.held_out_only = true;
    Verdict hv = ev_.evaluate(task_, file, h);
    rr.row = candidate_row(hv.outcome == Outcome::Pass ? v : hv, code);
    rr.infra = hv.outcome == Outcome::InfraError;
    if (hv.outcome == Outcome::Pass) {
      rr.passed = true;
    } else {
      rr.row.message = "held-out: " + hv.message;
      rr.feedback = held_out_failure_text();
    }
  } else {
    rr.row = candidate_row(v, code);
    rr.infra = v.outcome == Outcome::InfraError;
    rr.feedback = feedback_of(v, task_);
  }
  return rr;
}

// Stores the round's candidate (and writes baseline.cu when it passed); false: writing failed.
Result<bool> Translation::record(RoundResult& rr, const llm::ChatResponse& r, const Prompt& prompt,
                                 const std::string* code, int round, const store::LlmCallRow& call) {
  store::CandidateRow& c = rr.row;
  c.run_id = row_.id;
  c.seq = round;
  c.generation = round;
  c.repair_round = round - 1;
  c.op = "translate";
  if (previous_) c.parents = {previous_};
  c.model = r.model;
  c.prompt = prompt.system + "\n\n" + prompt.user;
  c.answer = r.text;
  llm::ParsedAnswer parsed = llm::parse_answer(r.text);
  c.name = parsed.name;
  c.rationale = parsed.thought;
  TranslateAttempt a{round, 0, c.outcome, c.reason, rr.passed || rr.infra ? "" : rr.feedback};
  bool written = true;
  if (rr.passed) {
    std::string text = provenance(task_, r.model, row_.id, round, ev_.is_fake()) + *code;
    if (auto w = write_baseline(task_.baseline_path(), text, opts_.force); !w) {
      c.message = "passed, but baseline.cu was not written: " + w.error().message;
      out_.message = w.error().message;
      written = false;
    } else {
      c.accepted = true;
    }
  }
  KEVO_TRY(db_.add_candidate(c, {call}));
  a.candidate = c.id;
  out_.attempts.push_back(a);
  (void)db_.add_event(row_.id, "candidate",
                      json{{"candidate", c.id}, {"seq", c.seq}, {"operator", c.op}, {"outcome", to_string(c.outcome)},
                           {"reason", c.reason}, {"round", round}}
                          .dump());
  if (code) previous_ = c.id;
  return written;
}

Result<TranslateOutcome> Translation::run(const std::string& torch_src) {
  KEVO_TRY(start());
  // The context a model sees: visible configs only, and no baseline (with --force, the one being
  // replaced is not shown either: the translation starts from the PyTorch module).
  TaskContext ctx = make_task_context(task_, Verdict{}, ev_.cuda_version(), load_abi_text());
  ctx.baseline_code.clear();
  std::string previous_source, feedback;
  for (int round = 1; round <= opts_.rounds; ++round) {
    if (cancel_.cancelled()) return finish(TranslateStatus::kInterrupted, "interrupted");
    TranslatePromptInput in{&ctx, task_.torch_reference, torch_src, previous_source, feedback, round, opts_.rounds};
    Prompt prompt = build_translate_prompt(in);
    llm::ChatRequest req = llm::ChatRequest::user(prompt.user, prompt.system);
    req.cache_tag = fmt::format("kevo-translate-round-{}", round);
    auto r = llm_.chat(req, cancel_);
    store::LlmCallRow call;
    call.run_id = row_.id;
    call.purpose = "translate";
    call.model = r ? r->model : llm_.name();
    if (!r) {
      call.error = r.error().message;
      KEVO_TRY(db_.add_llm_call(call));
      if (llm::error_kind(r.error()) == llm::ErrorKind::kCancelled)
        return finish(TranslateStatus::kInterrupted, "interrupted");
      return finish(TranslateStatus::kLlmFailed,
                    fmt::format("round {}: the LLM call failed: {}", round, r.error().message));
    }
    call.input_tokens = r->usage.input_tokens;
    call.output_tokens = r->usage.output_tokens;
    call.cost_usd = r->cost_usd;
    call.latency_s = r->latency_s;
    call.from_cache = r->from_cache;

    auto code = llm::extract_code(r->text);
    RoundResult rr;
    if (!code) {
      rr.row.outcome = store::CandidateOutcome::kInvalidAnswer;
      rr.row.reason = to_string(Reason::kNoCode);
      rr.row.message = clip(code.error().message, 2000);
      rr.row.features_json = "{}";
      rr.row.flags_json = "[]";
      rr.feedback = "Your answer held no kernel: " + code.error().message +
                    "\nAnswer with the complete .cu file in one ```cuda block.";
      // The previous kernel (if any) stays the one to fix.
    } else {
      rr = check(*code, round);
      previous_source = *code;
    }
    auto written = record(rr, *r, prompt, code ? &*code : nullptr, round, call);
    if (!written) return written.unexpected();
    if (rr.passed && !*written) {
      std::string why = out_.message;
      (void)finish(TranslateStatus::kRoundsExhausted, why);
      return fail("{}", why);
    }
    if (rr.passed) {
      out_.candidate = rr.row.id;
      out_.baseline = task_.baseline_path();
      row_.best_candidate = rr.row.id;
      return finish(TranslateStatus::kTranslated, "");
    }
    // The machine, not the kernel, failed: the model cannot fix that, and more rounds cost money.
    if (rr.infra)
      return finish(TranslateStatus::kInfraFailed,
                    fmt::format("round {}: the checker could not run the kernel: {}", round, rr.row.message));
    feedback = rr.feedback;
  }
  return finish(TranslateStatus::kRoundsExhausted,
                fmt::format("no kernel passed after {} round{} (run {}); the last problem:\n{}", opts_.rounds,
                            opts_.rounds == 1 ? "" : "s", row_.id, feedback));
}

}  // namespace

Result<TranslateOutcome> translate(const Task& task, CandidateEvaluator& evaluator, store::RunDb& db,
                                   llm::LlmClient* llm, const llm::CancelToken& cancel,
                                   const TranslateOptions& opts) {
  if (!llm) return fail("{}", translate_needs_model_note());
  if (opts.rounds < 1) return fail("translate: rounds must be at least 1 (got {})", opts.rounds);
  if (task.has_baseline() && !opts.force)
    return fail("task '{}' already has a baseline ({}); kevo translate writes one only for a task without "
                "(--force replaces it)",
                task.name, task.baseline_path().string());
  if (task.torch_reference.empty())
    return fail("task '{}' has no PyTorch reference (torch_reference in task.toml): nothing to translate from",
                task.name);
  auto torch_src = read_file(task.torch_reference_path());
  if (!torch_src) return fail("{}: {}", task.torch_reference_path().string(), torch_src.error().message);
  Translation t(task, evaluator, db, *llm, cancel, opts);
  return t.run(*torch_src);
}

}  // namespace kevo::evolve
