#include "evolve/marker_evaluator.h"

#include "util/hash.h"

#include <chrono>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <thread>

#include "check/verdict_json.h"
#include "util/fs.h"

namespace kevo::evolve {

namespace {

struct Markers {
  std::optional<Outcome> outcome;  // the first outcome word seen
  std::string text;     // the rest of that line
  double time_ms = 0, noise = 0.02;
  double dram_pct = -1, sm_pct = -1;  // a fake profile's figures (-1: not given)
  int regs = 32, sleep_ms = 0;
  long smem = 0;
  bool held_out_fail = false;
};

// A marker word naming an outcome the fake gives (never infra_error: that is the harness's).
std::optional<Outcome> marker_outcome(const std::string& w) {
  auto o = parse_outcome(w);
  return o == Outcome::InfraError ? std::nullopt : o;
}

Markers read_markers(const std::string& src) {
  Markers m;
  std::istringstream in(src);
  std::string line;
  while (std::getline(in, line)) {
    auto p = line.find("// fake:");
    if (p == std::string::npos) continue;
    std::istringstream words(line.substr(p + 8));
    std::string w;
    while (words >> w) {
      if (w == "held_out_fail") {
        m.held_out_fail = true;
        continue;
      }
      if (auto o = marker_outcome(w); o && !m.outcome) {
        m.outcome = o;
        if (*o != Outcome::Pass) {
          std::getline(words, m.text);
          if (!m.text.empty() && m.text[0] == ' ') m.text.erase(0, 1);
          break;
        }
        continue;
      }
      auto eq = w.find('=');
      if (eq == std::string::npos) continue;
      std::string k = w.substr(0, eq), v = w.substr(eq + 1);
      // strtod/strtol: a malformed number in a marker reads as 0 instead of throwing.
      const char* c = v.c_str();
      if (k == "time_ms") m.time_ms = std::strtod(c, nullptr);
      else if (k == "noise") m.noise = std::strtod(c, nullptr);
      else if (k == "dram") m.dram_pct = std::strtod(c, nullptr);
      else if (k == "sm") m.sm_pct = std::strtod(c, nullptr);
      else if (k == "regs") m.regs = static_cast<int>(std::strtol(c, nullptr, 10));
      else if (k == "smem") m.smem = std::strtol(c, nullptr, 10);
      else if (k == "sleep_ms") m.sleep_ms = static_cast<int>(std::strtol(c, nullptr, 10));
      else if (k == "wall_s") m.sleep_ms = static_cast<int>(std::strtod(c, nullptr) * 1000);
    }
  }
  return m;
}

std::string dims_text(const Task& t, const Config& c) {
  std::string s;
  for (size_t i = 0; i < t.dims.size(); ++i) {
    auto it = c.dims.find(t.dims[i]);
    s += fmt::format("{}{}={}", i ? ", " : "", t.dims[i], it == c.dims.end() ? 0 : it->second);
  }
  return s;
}

Timing fake_timing(const Task& task, double base_ms, double ms, double noise) {
  Timing t;
  t.config = task.main().name;
  t.has_baseline = true;
  t.candidate.n = 50;
  t.candidate.median = ms;
  t.candidate.median_lo = ms * (1 - noise);
  t.candidate.median_hi = ms * (1 + noise);
  t.baseline.n = 50;
  t.baseline.median = base_ms;
  t.baseline.median_lo = base_ms * (1 - noise);
  t.baseline.median_hi = base_ms * (1 + noise);
  t.speedup.value = base_ms / ms;
  t.speedup.lo = t.speedup.value * (1 - noise);
  t.speedup.hi = t.speedup.value * (1 + noise);
  t.floor.floor_ms = base_ms / 20;
  t.sol_fraction = t.floor.floor_ms / ms;
  return t;
}

// A one-kernel profile from the dram= and sm= markers (other figures unknown); without them, what
// a machine without ncu says.
Profile fake_profile(const Task& task, const Markers& m) {
  Profile p;
  p.config = task.main().name;
  if (m.dram_pct < 0 && m.sm_pct < 0) {
    p.status = ProfileStatus::kNoNcu;
    p.note = "no dram= or sm= marker (fake ncu)";
    return p;
  }
  p.status = ProfileStatus::kProfiled;
  KernelProfile k;
  k.name = "kernel";
  k.duration_us = (m.time_ms > 0 ? m.time_ms : 1) * 1000;
  k.dram_pct = m.dram_pct, k.sm_pct = m.sm_pct;
  if (m.regs > 0) k.registers_per_thread = m.regs;
  p.kernels.push_back(k);
  return p;
}

}  // namespace

Verdict MarkerEvaluator::evaluate(const Task& task, const std::filesystem::path& source_file,
                                  const EvalOptions& opts) {
  auto src = read_file(source_file);
  Verdict v;
  if (!src) {
    v.set(Outcome::InfraError, Reason::kInput, src.error().message);
    return v;
  }
  {
    std::lock_guard lock(mu_);
    calls_.push_back({*src, opts.held_out_only, opts.visible_only, false, opts.seed, opts.timing_stop_below,
                      opts.baseline_ms, opts.baseline_gpu});
  }
  v = judge(task, *src, opts);
  v.candidate = source_file.string();
  return v;
}

Verdict MarkerEvaluator::evaluate_baseline(const Task& task, const EvalOptions& opts) {
  {
    std::lock_guard lock(mu_);
    calls_.push_back({"<baseline>", opts.held_out_only, opts.visible_only, true, opts.seed, opts.timing_stop_below,
                      opts.baseline_ms, opts.baseline_gpu});
  }
  Verdict v;
  v.task = task.name;
  v.candidate = task.baseline_path().string();
  v.compile = CompileResult{.ok = true, .arch_used = "sm_90"};
  v.device = DeviceCeilings{.name = "Fake H100 (marker evaluator)", .uuid = "fake", .copy_gbps = 3000};
  Timing t = fake_timing(task, baseline_ms_, baseline_ms_, 0.01);
  t.has_baseline = false;
  v.timing = t;
  if (opts.profile) {  // a baseline that streams memory at half the peak
    Markers m;
    m.dram_pct = 45, m.sm_pct = 10, m.time_ms = baseline_ms_;
    v.profile = fake_profile(task, m);
  }
  return v;
}

std::string MarkerEvaluator::fingerprint(const std::string& source) const { return sha256_hex(source); }

Verdict MarkerEvaluator::judge(const Task& task, const std::string& source, const EvalOptions& opts) const {
  Markers m = read_markers(source);
  if (m.sleep_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(m.sleep_ms));
  Verdict v;
  v.task = task.name;
  v.seed = opts.seed.value_or(7);
  v.device = DeviceCeilings{.name = "Fake H100 (marker evaluator)", .uuid = "fake", .copy_gbps = 3000};
  CompileResult cr;
  cr.ok = m.outcome != Outcome::CompileError;
  cr.arch_used = "sm_90";
  if (cr.ok) {
    KernelResources k;
    k.function = "kernel";
    k.arch = "sm_90";
    k.registers = m.regs;
    k.shared_bytes = m.smem;
    cr.kernels.push_back(k);
  } else {
    cr.diagnostics = m.text.empty() ? "candidate.cu(1): error: fake compile error" : m.text;
  }
  v.compile = cr;
  if (!m.outcome) {
    v.set(Outcome::Incorrect, Reason::kMismatch, "no fake marker in the source");
    return v;
  }
  if (m.outcome == Outcome::CompileError) {
    v.set(Outcome::CompileError, Reason::kCompile, "the candidate does not compile");
    return v;
  }
  if (m.outcome == Outcome::Unsafe) {
    // The marker names the reason as stored ("static:stream_create", "hidden_work"); any other text
    // is read as a static check's rule.
    const std::string text = m.text.empty() ? "static:stream_create" : m.text;
    const auto parsed = parse_reason(text);
    const Reason why = parsed.value_or(Reason::kStatic);
    const std::string rule = parsed ? static_rule_of(text) : text;
    v.set(Outcome::Unsafe, why, "unsafe (fake)", rule);
    v.flags.push_back({why, "fake", rule});
    return v;
  }
  if (m.outcome == Outcome::Crash) {
    v.set(Outcome::Crash, Reason::kSignal, "the runner died (fake)");
    return v;
  }
  if (m.outcome == Outcome::Timeout) {
    v.set(Outcome::Timeout, Reason::kTimeout, "the call did not return (fake)");
    return v;
  }
  // Correctness on the configs the options select, in the checker's order.
  for (const auto& c : task.configs) {
    if (opts.visible_only && c.held_out) continue;
    if (opts.held_out_only && !c.held_out) continue;
    ConfigCheck cc{.config = c.name, .held_out = c.held_out, .ok = true, .draws = opts.seeds + 1};
    bool bad = m.outcome == Outcome::Incorrect || (c.held_out && m.held_out_fail);
    if (bad) {
      cc.ok = false;
      cc.detail = fmt::format("config '{}' ({}): output '{}': {}", c.name, dims_text(task, c),
                              task.outputs.empty() ? "out" : task.outputs[0].name,
                              m.text.empty() ? "mismatch at [0]: got 1, expected 2" : m.text);
    }
    v.configs.push_back(cc);
    if (bad) {
      v.set(Outcome::Incorrect, Reason::kMismatch, cc.detail);
      return v;
    }
  }
  if (opts.time && !opts.compile_only) {
    double ms = m.time_ms > 0 ? m.time_ms : baseline_ms_;
    v.timing = fake_timing(task, baseline_ms_, ms, m.noise);
    if (opts.torch_time) {  // PyTorch "eager" at the baseline's time, "compile" 20% faster
      torch::TimeResult r;
      r.device = "cuda";
      r.device_name = "Fake H100 (marker evaluator)";
      r.modes["eager"] = {.ok = true, .median_ms = baseline_ms_, .n = 10};
      r.modes["compile"] = {.ok = true, .median_ms = baseline_ms_ * 0.8, .n = 10};
      v.timing->pytorch = r;
    }
  }
  if (opts.profile) v.profile = fake_profile(task, m);
  return v;
}

std::vector<MarkerCall> MarkerEvaluator::calls() const {
  std::lock_guard lock(mu_);
  return calls_;
}

}  // namespace kevo::evolve
