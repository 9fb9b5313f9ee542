#include "check/verdict.h"

#include <fmt/format.h>

#include "util/enum_text.h"

namespace kevo {

namespace {

constexpr EnumText<EvalPhase> kEvalPhaseTexts[] = {
    {EvalPhase::kSetup, "setup"},
    {EvalPhase::kCorrectness, "correctness"},
    {EvalPhase::kTiming, "timing"},
    {EvalPhase::kSanitize, "sanitize"},
    {EvalPhase::kProfile, "profile"},
    {EvalPhase::kPytorch, "pytorch"},
};

constexpr EnumText<CheckedAgainst> kCheckedAgainstTexts[] = {
    {CheckedAgainst::kOracle, "oracle"},
    {CheckedAgainst::kConsistency, "consistency"},
};

}  // namespace

const char* to_string(EvalPhase p) { return enum_text(kEvalPhaseTexts, p); }

const char* to_string(CheckedAgainst a) { return enum_text(kCheckedAgainstTexts, a, "oracle"); }

namespace {
nlohmann::json summary_json(const Summary& s) {
  return {{"n", s.n},       {"median_ms", s.median}, {"mean_ms", s.mean}, {"min_ms", s.min},
          {"max_ms", s.max}, {"iqr_ms", s.iqr},      {"cv", s.cv},
          {"median_ci_ms", {s.median_lo, s.median_hi}}};
}
}  // namespace

void add_pytorch_json(const Timing& t, nlohmann::json& tj) {
  if (t.pytorch) {
    tj["pytorch"] = torch::pytorch_json(*t.pytorch);
    for (const char* m : torch::kTimeModes) {
      auto x = torch::speedup_over(*t.pytorch, m, t.candidate.median);
      tj[std::string("speedup_vs_") + m] = x ? nlohmann::json(*x) : nlohmann::json(nullptr);
    }
  } else if (!t.pytorch_note.empty()) {
    tj["pytorch"] = {{"skipped", t.pytorch_note}};
  }
}

std::string pytorch_text(const Timing& t) {
  if (t.pytorch) {
    std::string where = t.pytorch->device == "cpu"
                            ? fmt::format(" [on {}]", t.pytorch->device_name.empty() ? "the CPU" : t.pytorch->device_name)
                            : "";
    return fmt::format("            {}{}\n", torch::pytorch_line(*t.pytorch, t.candidate.median), where);
  }
  if (!t.pytorch_note.empty()) return fmt::format("            vs PyTorch: skipped ({})\n", t.pytorch_note);
  return "";
}

nlohmann::json Verdict::to_json() const {
  nlohmann::json j;
  j["outcome"] = outcome_name(outcome);
  j["exit_code"] = exit_code(outcome);
  j["reason"] = reason_text();
  j["message"] = message;
  j["task"] = task;
  j["candidate"] = candidate;
  j["seed"] = seed;
  j["seconds"] = seconds;
  if (compile) {
    nlohmann::json k = nlohmann::json::array();
    for (const auto& r : compile->kernels)
      k.push_back({{"function", r.function}, {"arch", r.arch}, {"registers", r.registers},
                   {"shared_bytes", r.shared_bytes}, {"stack_bytes", r.stack_bytes},
                   {"spill_store_bytes", r.spill_store_bytes}, {"spill_load_bytes", r.spill_load_bytes}});
    j["compile"] = {{"ok", compile->ok}, {"cache_hit", compile->cache_hit},
                    {"seconds", compile->seconds}, {"arch", compile->arch_used}, {"driver", compile->driver},
                    {"diagnostics", compile->diagnostics}, {"kernels", k}};
  }
  j["findings"] = nlohmann::json::array();
  for (const auto& f : findings)
    j["findings"].push_back({{"severity", f.severity == Finding::Severity::Unsafe ? "unsafe" : "warning"},
                             {"line", f.line}, {"rule", f.rule}, {"message", f.message}});
  j["configs"] = nlohmann::json::array();
  for (const auto& c : configs)
    j["configs"].push_back({{"config", c.config}, {"against", to_string(c.against)}, {"held_out", c.held_out}, {"ok", c.ok},
                            {"draws", c.draws}, {"max_abs_err", c.max_abs_err},
                            {"max_rel_err", c.max_rel_err}, {"detail", c.detail}, {"seconds", c.seconds}});
  j["phases"] = nlohmann::json::object();
  for (const auto& [phase, sec] : phases) j["phases"][to_string(phase)] = sec;
  j["work_seconds"] = nlohmann::json::object();
  for (const auto& [name, sec] : work) j["work_seconds"][name] = sec;
  if (timing) {
    nlohmann::json t = {{"config", timing->config}, {"candidate", summary_json(timing->candidate)},
                        {"floor_ms", timing->floor.floor_ms}, {"bound", timing->floor.bound},
                        {"impossible_below_ms", timing->floor.impossible_ms},
                        {"events_median_ms", timing->events_median},
                        {"sol_fraction", timing->sol_fraction},
                        {"max_wall_over_span", timing->max_wall_over_span}};
    auto outside_json = [](const OutsideCheck& o) {
      return nlohmann::json{{"verdict", to_string(o.verdict)}, {"events_ms", o.events_ms},
                            {"outside_ms", o.outside_ms}, {"ci_ms", o.ci_ms}, {"allowed_ms", o.allowed_ms},
                            {"fixed_excess_ms", o.fixed_excess_ms}, {"median_outside_ms", o.median_outside_ms},
                            {"median_allowed_ms", o.median_allowed_ms}, {"detail", o.detail}};
    };
    t["source"] = "cuda_events_confirmed_by_checker_clock";
    auto walls_json = [](const std::vector<BatchWall>& w) {
      nlohmann::json a = nlohmann::json::array();
      for (const auto& b : w) a.push_back({b.calls, b.wall_ms, b.events_ms});
      return a;
    };
    t["outside_clock"] = {{"candidate", outside_json(timing->outside)}, {"around_ms", timing->around_ms},
                          {"batch_calls", timing->batch_calls}, {"small_calls", timing->small_calls},
                          {"rounds", timing->rounds}, {"retried_rounds", timing->retried_rounds},
                          {"batches", {{"columns", {"calls", "wall_ms", "events_ms"}},
                                       {"candidate", walls_json(timing->walls_candidate)},
                                       {"baseline", walls_json(timing->walls_baseline)},
                                       {"around", walls_json(timing->walls_around)}}}};
    if (timing->stopped_below > 0) t["outside_clock"]["stopped_below"] = timing->stopped_below;
    if (timing->has_baseline) {
      t["outside_clock"]["baseline"] = outside_json(timing->outside_baseline);
      t["baseline"] = summary_json(timing->baseline);
      t["speedup"] = {{"value", timing->speedup.value}, {"ci95", {timing->speedup.lo, timing->speedup.hi}}};
    }
    add_pytorch_json(*timing, t);
    j["timing"] = t;
  }
  j["flags"] = nlohmann::json::array();
  for (const auto& f : flags) j["flags"].push_back({{"reason", f.reason_text()}, {"detail", f.detail}});
  if (device) j["device"] = device->to_json();
  if (isolation) j["isolation"] = isolation->to_json();
  if (!sanitizer.empty()) j["sanitizer"] = sanitizer;
  if (profile) j["profile"] = profile->to_json();
  return j;
}

std::string Verdict::to_text() const {
  std::string s = fmt::format("kevo eval  task {}  candidate {}  seed {}\n", task, candidate, seed);
  if (compile) {
    if (compile->ok) {
      int regs = 0;
      long smem = 0, spills = 0, stack = 0;
      for (const auto& k : compile->kernels) {
        regs = std::max(regs, k.registers);
        smem = std::max(smem, k.shared_bytes);
        spills += k.spill_store_bytes + k.spill_load_bytes;
        stack = std::max(stack, k.stack_bytes);
      }
      s += fmt::format("  compile   ok in {:.2f} s{}  {}  {} kernel(s), max {} regs, {} B smem, {} B stack, {} B spills\n",
                       compile->seconds, compile->cache_hit ? " (cached)" : "", compile->arch_used,
                       compile->kernels.size(), regs, smem, stack, spills);
    } else {
      s += fmt::format("  compile   FAILED{}\n{}\n", compile->timed_out ? " (timed out)" : "",
                       compile->diagnostics);
    }
  }
  for (const auto& f : findings)
    s += fmt::format("  static    {} line {}: {} ({})\n",
                     f.severity == Finding::Severity::Unsafe ? "UNSAFE " : "warning", f.line,
                     f.message, f.rule);
  for (const auto& c : configs)
    s += fmt::format("  correct   {:<12}{} {}  {} draws  max abs err {:.2g}  max rel err {:.2g}{}{}\n",
                     c.config, c.held_out ? " (held out)" : "", c.ok ? "ok  " : "FAIL", c.draws,
                     c.max_abs_err, c.max_rel_err,
                     c.against == CheckedAgainst::kConsistency
                         ? "  (consistency only: over the host budget, the baseline against itself in a second process)"
                         : "",
                     c.ok ? "" : "\n            " + c.detail);
  if (timing) {
    const auto& t = *timing;
    s += fmt::format("  time      {}: candidate {:.4f} ms (median of {}, CV {:.1f}%, IQR {:.4f})\n",
                     t.config, t.candidate.median, t.candidate.n, t.candidate.cv * 100,
                     t.candidate.iqr);
    if (t.has_baseline)
      s += fmt::format("            baseline  {:.4f} ms (median of {}, CV {:.1f}%)\n"
                       "            speedup   {:.3f}x  [95% CI {:.3f} - {:.3f}], same run, separate processes, alternating batches\n",
                       t.baseline.median, t.baseline.n, t.baseline.cv * 100, t.speedup.value,
                       t.speedup.lo, t.speedup.hi);
    if (t.outside.verdict != OutsideVerdict::Unmeasured)
      s += fmt::format("            checked   events {:.4f} ms vs the checker's clock {:.4f} ms +-{:.4f} per call "
                       "(allowed {:.4f} below; batches of {}/{} calls, {} rounds{}{})\n",
                       t.outside.events_ms, t.outside.outside_ms, t.outside.ci_ms, t.outside.allowed_ms,
                       t.small_calls > 0 ? t.small_calls : t.batch_calls, 2 * t.batch_calls, t.rounds,
                       t.retried_rounds > 0 ? fmt::format(", {} more dropped for a stall", t.retried_rounds) : "",
                       t.stopped_below > 0 ? fmt::format(", raced: clearly below {:.3f}x", t.stopped_below) : "");
    s += pytorch_text(t);
    if (t.floor.floor_ms > 0)
      s += fmt::format("  SOL       floor {:.4f} ms ({} bound): {:.1f}% of speed of light\n",
                       t.floor.floor_ms, t.floor.bound, t.sol_fraction * 100);
  }
  for (const auto& f : flags) s += fmt::format("  flag      {}: {}\n", f.reason_text(), f.detail);
  if (isolation) s += fmt::format("  isolated  {}\n", isolation->describe());
  if (!sanitizer.empty()) s += fmt::format("  sanitize  {}\n", sanitizer);
  if (profile) {
    std::string lines = profile->to_text();
    for (size_t at = 0; (at = lines.find('\n', at)) != std::string::npos && at + 1 < lines.size(); at += 1)
      lines.insert(++at, "            ");
    s += "  profile   " + lines;
  }
  if (!phases.empty()) {
    std::string p;
    for (const auto& [phase, sec] : phases)
      p += fmt::format("{}{} {:.1f} s", p.empty() ? "" : ", ", to_string(phase), sec);
    s += fmt::format("  seconds   {}\n", p);
  }
  if (!work.empty()) {
    std::string w;
    for (const auto& [name, sec] : work) w += fmt::format("{}{} {:.1f} s", w.empty() ? "" : ", ", name, sec);
    s += fmt::format("  work      {}\n", w);
  }
  if (outcome == Outcome::Pass)
    s += fmt::format("VERDICT: PASS ({:.1f} s)\n", seconds);
  else
    s += fmt::format("VERDICT: {} [{}] {}\n", outcome_name(outcome), reason_text(), message);
  return s;
}

}  // namespace kevo
