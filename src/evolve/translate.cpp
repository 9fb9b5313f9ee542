#include "evolve/translate.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compile/cache.h"
#include "evolve/features.h"
#include "evolve/prompts.h"
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

constexpr const char* kHeldOutFeedback =
    "The kernel is correct on the shapes listed above, but the checker also runs it on other shapes "
    "of the same form, which are not shown, and there it produced wrong results. Make it correct for "
    "every size: sizes that are not multiples of the block size, dimensions of size 1, large sizes "
    "(64-bit indexing), every loop bound and tail.";

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
      f = fmt::format("The checker rejected the kernel: {} ({}): {}", outcome_name(v.outcome), v.reason, v.message);
  }
  return clip(scrub_held_out(std::move(f), task), 4000);
}

store::CandidateRow row_from_verdict(const Verdict& v, const std::string& source) {
  store::CandidateRow c;
  c.source = source;
  c.outcome = outcome_name(v.outcome);
  c.reason = v.reason;
  c.message = v.message;
  if (v.compile) {
    json cj = *v.compile;
    cj.erase("log");
    c.compile_json = cj.dump();
  }
  c.verdict_json = v.to_json().dump();
  KernelFeatures f = extract_features(source, v.compile ? v.compile->kernels : std::vector<KernelResources>{},
                                      v.compile.has_value());
  c.features_json = f.to_json().dump();
  json flags = json::array();
  for (const auto& fl : v.flags) flags.push_back({{"reason", fl.reason}, {"detail", fl.detail}});
  c.flags_json = flags.dump();
  return c;
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

std::string provenance(const Task& task, const std::string& model, int64_t run, int round) {
  return fmt::format(
      "// Translated from {} by `kevo translate` (model {}, run {}, round {}); checked against the\n"
      "// task's oracle on its visible and held-out shapes before being written as the baseline.\n",
      task.torch_reference, model, run, round);
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

  store::RunRow row;
  row.task = task.name;
  row.task_dir = std::filesystem::absolute(task.dir).string();
  row.strategy = "translate";
  row.config_json = json{{"rounds", opts.rounds},
                         {"force", opts.force},
                         {"llm", llm->name()},
                         {"eval_seeds", opts.eval.seeds},
                         {"fake_evaluator", evaluator.is_fake()}}
                        .dump();
  row.note = "translation of " + task.torch_reference + " into the kevo ABI";
  auto id = db.create_run(row);
  if (!id) return id.unexpected();
  row.id = *id;

  std::filesystem::path work = opts.work_dir;
  if (work.empty()) work = std::filesystem::path(db.path().string() + ".work");
  work /= fmt::format("run-{}", row.id);
  std::error_code ec;
  std::filesystem::create_directories(work, ec);
  if (ec) return fail("cannot create {}: {}", work.string(), ec.message());

  // The context a model sees: visible configs only, and no baseline (with --force, the one being
  // replaced is not shown either: the translation starts from the PyTorch module).
  TaskContext ctx = make_task_context(task, Verdict{}, evaluator.cuda_version(), load_abi_text());
  ctx.baseline_code.clear();

  TranslateOutcome out;
  out.run_id = row.id;
  auto finish = [&](TranslateStatus st, std::string message) -> Result<TranslateOutcome> {
    out.status = st;
    out.message = std::move(message);
    row.status = st == TranslateStatus::kTranslated    ? store::RunStatus::kFinished
                 : st == TranslateStatus::kInterrupted ? store::RunStatus::kInterrupted
                                                       : store::RunStatus::kFailed;
    row.stop_reason = st == TranslateStatus::kTranslated        ? "translated"
                      : st == TranslateStatus::kRoundsExhausted ? "translate_rounds_exhausted"
                      : st == TranslateStatus::kLlmFailed       ? "llm_failed"
                                                                : "interrupted";
    if (!out.message.empty()) row.note += ": " + clip(out.message, 2000);
    KEVO_TRY(db.update_run(row));
    (void)db.add_event(row.id, "finished",
                       json{{"status", store::to_string(row.status)}, {"stop_reason", row.stop_reason},
                            {"candidates", out.attempts.size()}, {"baseline_candidate", out.candidate}}
                           .dump());
    return out;
  };

  std::string previous_source, feedback;
  int64_t previous = 0;
  for (int round = 1; round <= opts.rounds; ++round) {
    if (cancel.cancelled()) return finish(TranslateStatus::kInterrupted, "interrupted");
    TranslatePromptInput in;
    in.ctx = &ctx;
    in.torch_file = task.torch_reference;
    in.torch_source = *torch_src;
    in.failed_source = previous_source;
    in.feedback = feedback;
    in.round = round;
    in.rounds = opts.rounds;
    Prompt prompt = build_translate_prompt(in);
    llm::ChatRequest req = llm::ChatRequest::user(prompt.user, prompt.system);
    req.cache_tag = fmt::format("kevo-translate-round-{}", round);
    auto r = llm->chat(req, cancel);

    store::LlmCallRow call;
    call.run_id = row.id;
    call.purpose = "translate";
    if (!r) {
      call.model = llm->name();
      call.error = r.error().message;
      KEVO_TRY(db.add_llm_call(call));
      if (llm::error_kind(r.error()) == llm::ErrorKind::kCancelled)
        return finish(TranslateStatus::kInterrupted, "interrupted");
      return finish(TranslateStatus::kLlmFailed, fmt::format("round {}: the LLM call failed: {}", round,
                                                             r.error().message));
    }
    call.model = r->model;
    call.input_tokens = r->usage.input_tokens;
    call.output_tokens = r->usage.output_tokens;
    call.cost_usd = r->cost_usd;
    call.latency_s = r->latency_s;
    call.from_cache = r->from_cache;

    llm::ParsedAnswer parsed = llm::parse_answer(r->text);
    store::CandidateRow c;
    TranslateAttempt a;
    a.round = round;
    bool passed = false;
    auto code = llm::extract_code(r->text);
    if (!code) {
      c.outcome = "invalid_answer";
      c.reason = "no_code";
      c.message = clip(code.error().message, 2000);
      c.features_json = "{}";
      c.flags_json = "[]";
      feedback = "Your answer held no kernel: " + code.error().message +
                 "\nAnswer with the complete .cu file in one ```cuda block.";
      // The previous kernel (if any) stays the one to fix.
    } else {
      auto file = work / fmt::format("translate{}.cu", round);
      KEVO_TRY(write_file_atomic(file, *code));
      EvalOptions o = opts.eval;
      o.visible_only = true;
      o.held_out_only = false;
      o.baseline_mode = false;
      o.time = false;  // there is nothing to be faster than yet
      Verdict v = evaluator.evaluate(task, file, o);
      if (v.outcome == Outcome::Pass) {
        // The baseline must hold on the shapes the model never saw, too.
        EvalOptions h = o;
        h.visible_only = false;
        h.held_out_only = true;
        Verdict hv = evaluator.evaluate(task, file, h);
        c = row_from_verdict(hv.outcome == Outcome::Pass ? v : hv, *code);
        if (hv.outcome == Outcome::Pass) {
          passed = true;
        } else {
          c.message = "held-out: " + hv.message;
          feedback = kHeldOutFeedback;
        }
      } else {
        c = row_from_verdict(v, *code);
        feedback = feedback_of(v, task);
      }
      previous_source = *code;
    }
    c.run_id = row.id;
    c.seq = round;
    c.generation = round;
    c.repair_round = round - 1;
    c.op = "translate";
    if (previous) c.parents = {previous};
    c.model = r->model;
    c.prompt = prompt.system + "\n\n" + prompt.user;
    c.answer = r->text;
    c.name = parsed.name;
    c.rationale = parsed.thought;
    a.outcome = c.outcome;
    a.reason = c.reason;
    if (passed) {
      std::string text = provenance(task, r->model, row.id, round) + *code;
      if (auto w = write_baseline(task.baseline_path(), text, opts.force); !w) {
        c.message = "passed, but baseline.cu was not written: " + w.error().message;
        KEVO_TRY(db.add_candidate(c, {call}));
        a.candidate = c.id;
        out.attempts.push_back(a);
        (void)finish(TranslateStatus::kRoundsExhausted, w.error().message);
        return w.unexpected();
      }
      c.accepted = true;
    } else {
      a.feedback = feedback;
    }
    KEVO_TRY(db.add_candidate(c, {call}));
    a.candidate = c.id;
    out.attempts.push_back(a);
    (void)db.add_event(row.id, "candidate",
                       json{{"candidate", c.id}, {"seq", c.seq}, {"operator", c.op}, {"outcome", c.outcome},
                            {"reason", c.reason}, {"round", round}}
                           .dump());
    if (passed) {
      out.candidate = c.id;
      out.baseline = task.baseline_path();
      row.best_candidate = c.id;
      return finish(TranslateStatus::kTranslated, "");
    }
    if (code) previous = c.id;
  }
  return finish(TranslateStatus::kRoundsExhausted,
                fmt::format("no kernel passed after {} round{} (run {}); the last problem:\n{}", opts.rounds,
                            opts.rounds == 1 ? "" : "s", row.id, feedback));
}

}  // namespace kevo::evolve
