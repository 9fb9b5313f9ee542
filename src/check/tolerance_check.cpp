#include "check/tolerance_check.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace kevo {

namespace {

// The mean of the finite values and their rms (a NaN in a reference is another check's business).
struct Scale {
  double mean = 0, rms = 0;
};

Scale scale_of(const Expected& e) {
  double sum = 0, sq = 0;
  int64_t n = 0;
  for (int64_t i = 0; i < e.size(); ++i) {
    const double v = e.at(i);
    if (!std::isfinite(v)) continue;
    sum += v;
    sq += v * v;
    ++n;
  }
  if (n == 0) return {};
  return {sum / static_cast<double>(n), std::sqrt(sq / static_cast<double>(n))};
}

}  // namespace

Status check_tolerance_rejects_constant(const ResolvedConfig& rc, const std::vector<Expected>& want) {
  if (want.size() != rc.outputs.size())
    return fail("config '{}': the oracle gave {} outputs, the task declares {}", rc.config->name, want.size(),
                rc.outputs.size());
  for (size_t o = 0; o < rc.outputs.size(); ++o) {
    const ResolvedTensor& out = rc.outputs[o];
    if (out.numel < 2 || want[o].size() != out.numel) continue;
    const Scale s = scale_of(want[o]);
    HostTensor constant = make_tensor(out.name(), out.dtype(), out.shape);
    for (int64_t i = 0; i < out.numel; ++i)
      store_from_double(constant.bytes.data(), constant.dtype, static_cast<size_t>(i), s.mean);
    if (!compare_output(constant, want[o], rc.tolerance, false).ok) continue;
    return fail(ErrorCode::kParse,
                "config '{}': output '{}' passes as the constant {:.3g} everywhere: its values (rms {:.3g}) lie "
                "within the tolerance (atol {:g} x max(1, rms), rtol {:g}); a [tolerance] atol of about {:.1g} (1e-4 of "
                "the rms) would make it mean something (docs/TASK_FORMAT.md)",
                rc.config->name, out.name(), s.mean, s.rms, rc.tolerance.atol, rc.tolerance.rtol, 1e-4 * s.rms);
  }
  return {};
}

std::vector<const Config*> tolerance_check_configs(const Task& task) {
  constexpr uint64_t kMaxElements = uint64_t(1) << 20;
  std::vector<std::pair<uint64_t, const Config*>> sized;
  for (const Config& c : task.configs) {
    if (c.held_out) continue;
    if (auto r = task.resolve(c)) sized.emplace_back(r->input_numel(), &c);
  }
  std::stable_sort(sized.begin(), sized.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<const Config*> out;
  for (const auto& [n, c] : sized)
    if (out.empty() || n <= kMaxElements) out.push_back(c);
  return out;
}

Status check_tolerance_at_load(const Task& task, Oracle& oracle, uint64_t seed) {
  Status first;
  for (const Config* c : tolerance_check_configs(task)) {
    auto rc = task.resolve(*c);
    if (!rc) return rc.unexpected();
    auto ins = generate_inputs(*rc, seed, false);
    if (!ins) return ins.unexpected();
    auto want = oracle.host_outputs(*c, *ins);
    if (!want) return fail("config '{}': the oracle failed: {}", c->name, want.error().message);
    Status st = check_tolerance_rejects_constant(*rc, *want);
    if (st) return st;
    if (st.error().code != ErrorCode::kParse) return st;
    if (first) first = st;
  }
  return first;
}

}  // namespace kevo
