#include "check/verdict_json.h"

#include <tuple>

#include "util/json_fields.h"

namespace kevo {

using nlohmann::json;

namespace {

// A [lo, hi] pair; absent or malformed reads as zeros.
std::pair<double, double> pair_of(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) return {0, 0};
  const json& a = j[key];
  if (!a.is_array() || a.size() != 2 || !a[0].is_number() || !a[1].is_number()) return {0, 0};
  return {a[0].get<double>(), a[1].get<double>()};
}

Summary summary_from(const json& j) {
  JsonFields f(j, "summary");
  Summary s;
  s.n = f.get("n", size_t{0});
  s.median = f.get("median_ms", 0.0);
  s.mean = f.get("mean_ms", 0.0);
  s.min = f.get("min_ms", 0.0);
  s.max = f.get("max_ms", 0.0);
  s.iqr = f.get("iqr_ms", 0.0);
  s.cv = f.get("cv", 0.0);
  std::tie(s.median_lo, s.median_hi) = pair_of(j, "median_ci_ms");
  return s;
}

OutsideCheck outside_from(const json& j) {
  JsonFields f(j, "outside");
  OutsideCheck o;
  const std::string v = f.get("verdict", std::string("unmeasured"));
  o.verdict = parse_outside_verdict(v).value_or(OutsideVerdict::Unmeasured);
  o.events_ms = f.get("events_ms", 0.0);
  o.outside_ms = f.get("outside_ms", 0.0);
  o.ci_ms = f.get("ci_ms", 0.0);
  o.allowed_ms = f.get("allowed_ms", 0.0);
  o.fixed_excess_ms = f.get("fixed_excess_ms", 0.0);
  o.median_outside_ms = f.get("median_outside_ms", 0.0);
  o.median_allowed_ms = f.get("median_allowed_ms", 0.0);
  o.detail = f.get("detail", std::string());
  return o;
}

std::optional<torch::TimeResult> pytorch_from(const json& p) {
  if (!p.is_object() || p.contains("skipped")) return std::nullopt;
  torch::TimeResult r;
  r.device = field_or(p, "device", std::string());
  r.device_name = field_or(p, "device_name", std::string());
  const json errors = JsonFields(p, "pytorch").object("errors");
  const json modes = JsonFields(p, "pytorch").object("modes");
  for (const char* m : torch::kTimeModes) {
    torch::TimedMode t;
    if (modes.contains(m) && modes[m].is_object()) {
      JsonFields f(modes[m], m);
      t.ok = true;
      t.median_ms = f.get("median_ms", 0.0);
      t.ci_low_ms = f.get("ci_low_ms", 0.0);
      t.ci_high_ms = f.get("ci_high_ms", 0.0);
      t.min_ms = f.get("min_ms", 0.0);
      t.n = f.get("n", 0);
    } else if (errors.contains(m)) {
      t.error = field_or(errors, m, std::string());
    } else {
      continue;  // not asked for
    }
    r.modes[m] = t;
  }
  return r;
}

// [[calls, wall_ms, events_ms], ...]; absent: none.
Result<std::vector<BatchWall>> walls_from(const json& b, const char* series) {
  std::vector<BatchWall> w;
  if (!b.contains(series)) return w;
  const json& a = b[series];
  if (!a.is_array()) return fail("timing.outside_clock.batches.{}: not an array", series);
  for (const auto& row : a) {
    if (!row.is_array() || row.size() != 3 || !row[0].is_number_integer() || !row[1].is_number() || !row[2].is_number())
      return fail("timing.outside_clock.batches.{}: each batch is [calls, wall_ms, events_ms]", series);
    w.push_back({row[0].get<int>(), row[1].get<double>(), row[2].get<double>()});
  }
  return w;
}

Result<Timing> timing_from(const json& tj) {
  JsonFields f(tj, "timing");
  Timing t;
  t.config = f.get("config", std::string());
  t.candidate = summary_from(f.object("candidate"));
  t.floor.floor_ms = f.get("floor_ms", 0.0);
  t.floor.bound = f.get("bound", std::string("memory")) == "compute" ? "compute" : "memory";
  t.floor.impossible_ms = f.get("impossible_below_ms", 0.0);
  t.events_median = f.get("events_median_ms", 0.0);
  t.sol_fraction = f.get("sol_fraction", 0.0);
  t.max_wall_over_span = f.get("max_wall_over_span", 0.0);
  const json ocj = f.object("outside_clock");
  JsonFields oc(ocj, "timing.outside_clock");
  t.outside = outside_from(oc.object("candidate"));
  t.around_ms = oc.get("around_ms", 0.0);
  t.batch_calls = oc.get("batch_calls", 0);
  t.small_calls = oc.get("small_calls", 0);
  t.rounds = oc.get("rounds", 0);
  t.retried_rounds = oc.get("retried_rounds", 0);
  t.stopped_below = oc.get("stopped_below", 0.0);
  if (ocj.contains("batches") && ocj["batches"].is_object()) {
    const json& b = ocj["batches"];
    for (auto [name, dst] : {std::pair{"candidate", &t.walls_candidate}, std::pair{"baseline", &t.walls_baseline},
                             std::pair{"around", &t.walls_around}}) {
      auto w = walls_from(b, name);
      if (!w) return w.unexpected();
      *dst = std::move(*w);
    }
  }
  if (tj.contains("baseline")) {
    t.has_baseline = true;
    t.baseline = summary_from(f.object("baseline"));
    t.outside_baseline = outside_from(oc.object("baseline"));
    const json spj = f.object("speedup");
    JsonFields sp(spj, "timing.speedup");
    t.speedup.value = sp.get("value", 0.0);
    std::tie(t.speedup.lo, t.speedup.hi) = pair_of(spj, "ci95");
    KEVO_TRY(sp.status());
  }
  if (tj.contains("pytorch")) {
    t.pytorch = pytorch_from(tj["pytorch"]);
    if (!t.pytorch) t.pytorch_note = field_or(tj["pytorch"], "skipped", std::string());
  }
  KEVO_TRY(oc.status());
  KEVO_TRY(f.status());
  return t;
}

Result<CompileResult> compile_from(const json& cj) {
  JsonFields f(cj, "compile");
  CompileResult c;
  c.ok = f.get("ok", false);
  c.cache_hit = f.get("cache_hit", false);
  c.seconds = f.get("seconds", 0.0);
  c.arch_used = f.get("arch", std::string());
  c.driver = f.get("driver", std::string());
  c.diagnostics = f.get("diagnostics", std::string());
  const json ks = cj.is_object() && cj.contains("kernels") && cj["kernels"].is_array() ? cj["kernels"] : json::array();
  for (const auto& k : ks) {
    JsonFields kf(k, "compile.kernels[]");
    KernelResources r;
    r.function = kf.get("function", std::string());
    r.arch = kf.get("arch", std::string());
    r.registers = kf.get("registers", 0);
    r.shared_bytes = kf.get("shared_bytes", long{0});
    r.stack_bytes = kf.get("stack_bytes", long{0});
    r.spill_store_bytes = kf.get("spill_store_bytes", long{0});
    r.spill_load_bytes = kf.get("spill_load_bytes", long{0});
    KEVO_TRY(kf.status());
    c.kernels.push_back(r);
  }
  KEVO_TRY(f.status());
  return c;
}

const json& member(const json& j, const char* key, const json& empty) {
  return j.contains(key) && j[key].type() == empty.type() ? j[key] : empty;
}

Status lists_from(const json& j, Verdict& v) {
  static const json kArray = json::array(), kObject = json::object();
  for (const auto& c : member(j, "configs", kArray)) {
    ConfigCheck cc;
    cc.config = field_or(c, "config", std::string());
    cc.held_out = field_or(c, "held_out", false);
    cc.against = field_or(c, "against", std::string("oracle")) == "consistency" ? CheckedAgainst::kConsistency
                                                                               : CheckedAgainst::kOracle;
    cc.ok = field_or(c, "ok", true);
    cc.draws = field_or(c, "draws", 0);
    cc.max_abs_err = field_or(c, "max_abs_err", 0.0);
    cc.max_rel_err = field_or(c, "max_rel_err", 0.0);
    cc.detail = field_or(c, "detail", std::string());
    cc.seconds = field_or(c, "seconds", 0.0);
    v.configs.push_back(cc);
  }
  for (const auto& f : member(j, "findings", kArray))
    v.findings.push_back({field_or(f, "severity", std::string()) == "unsafe" ? Finding::Severity::Unsafe
                                                                               : Finding::Severity::Warning,
                          field_or(f, "line", 0), field_or(f, "rule", std::string()),
                          field_or(f, "message", std::string())});
  for (const auto& f : member(j, "flags", kArray)) {
    const std::string text = field_or(f, "reason", std::string());
    auto why = parse_reason(text);
    if (!why) return fail("verdict: a flag of unknown reason '{}'", text);
    v.flags.push_back({*why, field_or(f, "detail", std::string()), static_rule_of(text)});
  }
  // Stored by to_json as objects (names sorted); the phases' order is restored by that of the
  // evaluation (EvalPhase's).
  const json& ph = member(j, "phases", kObject);
  for (EvalPhase p : kEvalPhases)
    if (const char* name = to_string(p); ph.contains(name) && ph[name].is_number())
      v.phases.emplace_back(p, ph[name].get<double>());
  for (const auto& [name, sec] : member(j, "work_seconds", kObject).items())
    if (sec.is_number()) v.work[name] = sec.get<double>();
  return {};
}

}  // namespace

Result<Verdict> verdict_from_json(const json& j) {
  if (!j.is_object()) return fail("verdict: not a JSON object");
  JsonFields f(j, "verdict");
  Verdict v;
  const std::string name = f.get("outcome", std::string());
  auto o = parse_outcome(name);
  if (!o) return fail("verdict: unknown outcome '{}'", name);
  v.outcome = *o;
  const std::string reason = f.get("reason", std::string());
  v.message = f.get("message", std::string());
  v.task = f.get("task", std::string());
  v.candidate = f.get("candidate", std::string());
  v.seed = f.get("seed", uint64_t{0});
  v.seconds = f.get("seconds", 0.0);
  v.sanitizer = f.get("sanitizer", std::string());
  KEVO_TRY(f.status());
  auto why = parse_reason(reason);
  if (!why) return fail("verdict: unknown reason '{}'", reason);
  v.reason = *why;
  v.static_rule = static_rule_of(reason);
  if (j.contains("compile")) {
    auto c = compile_from(j["compile"]);
    if (!c) return c.unexpected();
    v.compile = std::move(*c);
  }
  if (j.contains("timing")) {
    auto t = timing_from(j["timing"]);
    if (!t) return t.unexpected();
    v.timing = std::move(*t);
  }
  if (j.contains("device") && j["device"].is_object()) v.device = DeviceCeilings::from_json(j["device"]);
  if (j.contains("isolation") && j["isolation"].is_object()) v.isolation = Isolation::from_json(j["isolation"]);
  if (j.contains("profile")) {
    auto p = profile_from_json(j["profile"]);
    if (!p) return fail("verdict: {}", p.error().message);
    v.profile = std::move(*p);
  }
  KEVO_TRY(lists_from(j, v));
  return v;
}

}  // namespace kevo
