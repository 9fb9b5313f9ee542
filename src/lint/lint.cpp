#include "lint/lint.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>

#include "check/compare.h"
#include "lint/backward_lint.h"
#include "lint/key_list.h"
#include "check/cpu_reference.h"
#include "task/resolved.h"
#include "util/enum_text.h"

namespace kevo {

bool LintReport::ok() const {
  return count(Severity::Fail) == 0;
}

int LintReport::count(Severity s) const {
  return static_cast<int>(std::count_if(findings.begin(), findings.end(),
                                        [s](const LintFinding& f) { return f.severity == s; }));
}

namespace {

// In `kevo task lint`'s report and its JSON: a value's text never changes.
constexpr EnumText<Severity> kSeverityTexts[] = {
    {Severity::Skip, "SKIP"},
    {Severity::Pass, "PASS"},
    {Severity::Warn, "WARN"},
    {Severity::Fail, "FAIL"},
};

}  // namespace

const char* to_string(Severity s) { return enum_text(kSeverityTexts, s); }

std::string format_report(const LintReport& r) {
  std::string s =
      fmt::format("{}: {} ({} checks on configs {})\n", r.task,
                  r.ok() ? (r.count(Severity::Warn) ? "ok, with warnings" : "ok") : "DEGENERATE",
                  r.findings.size(), fmt::join(r.configs, ", "));
  for (const auto& f : r.findings)
    s += fmt::format("  {} {:<14} {}\n", to_string(f.severity), f.check, f.message);
  return s;
}

namespace {

// Elements of all inputs and outputs (no more than their bytes, so the sum fits).
int64_t config_elements(const Task& task, const Config& c) {
  auto r = task.resolve(c);
  if (!r) return INT64_MAX;
  uint64_t n = r->input_numel();
  for (const auto& o : r->outputs) n += static_cast<uint64_t>(o.numel);
  return static_cast<int64_t>(std::min<uint64_t>(n, INT64_MAX));
}

// Output `o` of config `r` holding `got` (rounded to the output's dtype).
HostTensor output_tensor(const ResolvedConfig& r, size_t o, const std::vector<double>& got) {
  HostTensor t = make_tensor(r.outputs[o].name(), r.outputs[o].dtype(), r.outputs[o].shape);
  for (size_t i = 0; i < got.size(); ++i) store_from_double(t.bytes.data(), t.dtype, i, got[i]);
  return t;
}

// Would a kernel that writes `got` pass against `want`?
bool passes(const ResolvedConfig& r, size_t o, const std::vector<double>& got, const std::vector<double>& want) {
  return compare_output(output_tensor(r, o, got), want, r.tolerance, false).ok;
}

// Where a property held, per key ("output 'y'", "input 'w'", ...), over the checked configs.
struct Tally {
  std::vector<std::string> key_order;
  std::map<std::string, std::vector<std::string>> applicable, holds;
  void add(const std::string& key, const std::string& config, bool held) {
    if (!applicable.count(key)) key_order.push_back(key);
    applicable[key].push_back(config);
    if (held) holds[key].push_back(config);
  }
  // Keys that hold on the same configs make one part of the message (a module's many unused
  // buffers read as one line, key_list.h).
  LintFinding finding(const std::string& check, const std::string& what) const {
    LintFinding f{check, Severity::Pass, ""};
    std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> groups;  // configs -> keys
    for (const auto& key : key_order) {
      auto it = holds.find(key);
      if (it == holds.end() || it->second.empty()) continue;
      f.keys.push_back(key);
      auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& x) { return x.first == it->second; });
      if (g == groups.end()) g = groups.insert(groups.end(), {it->second, {}});
      g->second.push_back(key);
    }
    std::vector<std::string> parts;
    for (const auto& [configs, keys] : groups) {
      bool all = configs.size() == applicable.at(keys.front()).size();
      f.severity = std::max(f.severity, all ? Severity::Fail : Severity::Warn);
      parts.push_back(fmt::format("{} {} on {} ({})", key_list(keys), what,
                                  all ? "every checked config" : "some configs", fmt::join(configs, ", ")));
    }
    if (parts.empty())
      f.message = key_order.empty() ? "not applicable" : fmt::format("clean ({})", key_list(key_order));
    else
      f.message = fmt::format("{}", fmt::join(parts, "; "));
    return f;
  }
};

}  // namespace

std::vector<const Config*> lint_configs(const Task& task, const LintOptions& opts) {
  std::vector<const Config*> out;
  if (!opts.configs.empty()) {
    for (const auto& name : opts.configs)
      for (const auto& c : task.configs)
        if (c.name == name) out.push_back(&c);
    return out;
  }
  std::vector<std::pair<int64_t, const Config*>> cand;
  for (const auto& c : task.configs)
    if (opts.include_held_out || !c.held_out) cand.emplace_back(config_elements(task, c), &c);
  std::stable_sort(cand.begin(), cand.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [n, c] : cand)
    if (n <= opts.max_elements && static_cast<int>(out.size()) < opts.max_configs) out.push_back(c);
  if (out.empty() && !cand.empty()) out.push_back(cand.front().second);  // always check something
  return out;
}

Result<LintReport> lint_outputs(const Task& task, const OutputsFn& outputs,
                                const LintOptions& opts) {
  LintReport rep;
  rep.task = task.name;
  auto configs = lint_configs(task, opts);
  if (configs.empty()) return fail("{}: no configuration to lint", task.name);
  Tally nonfinite, band, seed, axis, unused;
  const int seeds = std::max(2, opts.seeds);

  for (const Config* cp : configs) {
    const Config& c = *cp;
    rep.configs.push_back(c.name);
    auto resolved = task.resolve(c);
    if (!resolved) return resolved.unexpected();
    const ResolvedConfig& rc = *resolved;
    auto run = [&](const std::vector<HostTensor>& ins) -> Result<std::vector<std::vector<double>>> {
      auto r = outputs(c, ins);
      if (!r) return r.unexpected();
      if (r->size() != task.outputs.size())
        return fail("{}: config '{}': {} outputs, the task declares {}", task.name, c.name,
                    r->size(), task.outputs.size());
      for (size_t o = 0; o < r->size(); ++o)
        if (static_cast<int64_t>((*r)[o].size()) != rc.outputs[o].numel)
          return fail("{}: config '{}': output '{}' has {} values, its shape wants {}", task.name,
                      c.name, task.outputs[o].name, (*r)[o].size(), rc.outputs[o].numel);
      return r;
    };
    auto ins0 = generate_inputs(rc, opts.seed, false);
    if (!ins0) return ins0.unexpected();
    auto out0 = run(*ins0);
    if (!out0) return out0.unexpected();

    for (size_t o = 0; o < task.outputs.size(); ++o) {
      const auto& y = (*out0)[o];
      const std::string key = fmt::format("output '{}'", task.outputs[o].name);
      nonfinite.add(key, c.name,
                    std::any_of(y.begin(), y.end(), [](double v) { return !std::isfinite(v); }));
      if (y.size() >= 2) {
        double mean = 0;
        for (double v : y) mean += v;
        mean /= static_cast<double>(y.size());
        bool held = passes(rc, o, std::vector<double>(y.size(), 0.0), y) ||
                    passes(rc, o, std::vector<double>(y.size(), mean), y);
        band.add(key, c.name, held);
      }
      // Broadcast slice 0, or the mean, along each axis of extent >= 2.
      const auto& sh = rc.outputs[o].shape;
      for (size_t ax = 0; ax < sh.size(); ++ax) {
        if (sh[ax] < 2) continue;
        int64_t inner = 1;
        for (size_t k = ax + 1; k < sh.size(); ++k) inner *= sh[k];
        const int64_t extent = sh[ax], outer = static_cast<int64_t>(y.size()) / (extent * inner);
        std::vector<double> first(y.size()), avg(y.size());
        for (int64_t a = 0; a < outer; ++a)
          for (int64_t i = 0; i < inner; ++i) {
            double s = 0;
            for (int64_t e = 0; e < extent; ++e) s += y[(a * extent + e) * inner + i];
            for (int64_t e = 0; e < extent; ++e) {
              first[(a * extent + e) * inner + i] = y[a * extent * inner + i];
              avg[(a * extent + e) * inner + i] = s / static_cast<double>(extent);
            }
          }
        bool held = passes(rc, o, first, y) || passes(rc, o, avg, y);
        axis.add(fmt::format("{} axis {}", key, ax), c.name, held);
      }
    }

    // Other draws: would the first draw's outputs pass for them?
    std::vector<bool> same(task.outputs.size(), true);
    for (int s = 1; s < seeds; ++s) {
      auto ins = generate_inputs(rc, opts.seed + 7919ull * static_cast<uint64_t>(s), false);
      if (!ins) return ins.unexpected();
      auto out = run(*ins);
      if (!out) return out.unexpected();
      for (size_t o = 0; o < task.outputs.size(); ++o)
        if (same[o] && !passes(rc, o, (*out0)[o], (*out)[o])) same[o] = false;
    }
    for (size_t o = 0; o < task.outputs.size(); ++o)
      seed.add(fmt::format("output '{}'", task.outputs[o].name), c.name, same[o]);

    // Redraw one input at a time, keeping the others.
    for (size_t i = 0; i < task.inputs.size(); ++i) {
      std::vector<HostTensor> ins = *ins0;
      auto t = generate_input(task.inputs[i], ins[i].shape, c.dims, opts.seed + 104729ull * (i + 1),
                              false);
      if (!t) return t.unexpected();
      ins[i] = std::move(*t);
      auto out = run(ins);
      if (!out) return out.unexpected();
      bool ignored = true;
      for (size_t o = 0; o < task.outputs.size() && ignored; ++o)
        ignored = passes(rc, o, (*out0)[o], (*out)[o]);
      unused.add(fmt::format("input '{}'", task.inputs[i].name), c.name, ignored);
    }
  }

  LintFinding nf = nonfinite.finding("nonfinite", "has NaN/Inf in the reference");
  if (nf.severity == Severity::Warn) nf.severity = Severity::Fail;  // a broken reference, anywhere
  rep.findings.push_back(nf);
  rep.findings.push_back(band.finding("tiny_band", "passes as a constant (0 or its mean)"));
  rep.findings.push_back(seed.finding("seed_constant", "passes with another draw's values"));
  rep.findings.push_back(axis.finding("uniform_axis", "passes as one broadcast slice"));
  rep.findings.push_back(unused.finding("input_unused", "can be ignored (redrawn, outputs pass)"));
  for (auto& f : lint_backward(task)) rep.findings.push_back(std::move(f));
  return rep;
}

Result<LintFinding> lint_baseline(const Task& task, const OutputsFn& reference,
                                  const OutputsFn& baseline, const LintOptions& opts) {
  LintFinding f{"baseline", Severity::Pass, ""};
  std::vector<std::string> bad, good;
  for (const Config* cp : lint_configs(task, opts)) {
    const Config& c = *cp;
    auto rc = task.resolve(c);
    if (!rc) return rc.unexpected();
    auto ins = generate_inputs(*rc, opts.seed, false);
    if (!ins) return ins.unexpected();
    auto want = reference(c, *ins);
    if (!want) return want.unexpected();
    auto got = baseline(c, *ins);
    if (!got) {
      bad.push_back(fmt::format("{}: the baseline failed: {}", c.name, got.error().message));
      continue;
    }
    bool ok = got->size() == want->size();
    for (size_t o = 0; ok && o < rc->outputs.size(); ++o) {
      const ResolvedTensor& out = rc->outputs[o];
      if ((*got)[o].size() != static_cast<size_t>(out.numel) || (*want)[o].size() != (*got)[o].size()) {
        bad.push_back(fmt::format("{}: output '{}' has the wrong size", c.name, out.name()));
        ok = false;
        break;
      }
      Comparison cmp = compare_output(output_tensor(*rc, o, (*got)[o]), (*want)[o], rc->tolerance, false);
      if (!cmp.ok) {
        bad.push_back(fmt::format("{}: output '{}': {}", c.name, out.name(), cmp.describe(out.shape)));
        ok = false;
      }
    }
    if (ok) good.push_back(c.name);
  }
  if (!bad.empty()) {
    f.severity = Severity::Fail;
    f.message = fmt::format("the baseline does not match the reference: {}", fmt::join(bad, "; "));
  } else {
    f.message = fmt::format("the baseline matches the reference on {}", fmt::join(good, ", "));
  }
  return f;
}

Result<OutputsFn> cpu_reference_outputs(const Task& task) {
  auto ref = CpuReference::compile(task);
  if (!ref) return ref.unexpected();
  auto shared = std::make_shared<CpuReference>(std::move(*ref));
  auto t = std::make_shared<Task>(task);
  return OutputsFn([shared, t](const Config& c, const std::vector<HostTensor>& ins) {
    return shared->run(*t, c, ins);
  });
}

}  // namespace kevo
