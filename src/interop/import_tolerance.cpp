#include "interop/import_tolerance.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "task/resolved.h"
#include "task/tensor.h"
#include "torch/oracle.h"

namespace kevo::interop {

namespace {

constexpr double kMaxBytes = 64.0 * 1024 * 1024;
constexpr double kMaxFlops = 1e10;
constexpr double kMaxSeconds = 20;
// The band may be at most this fraction of an output's spread (its standard deviation): a constant,
// or another draw's values, then differ from most elements by far more than the band, while a
// correct kernel's rounding (~1e-7 of the spread in f32) stays far inside it.
constexpr double kSpreadFraction = 1e-2;

// The largest atol for which a value off by 1% of the output's spread fails the comparison:
// atol x max(1, rms) <= spread / 100. 0 when the output does not vary (the lint's finding).
double atol_limit(const HostTensor& t) {
  double sum = 0, sq = 0;
  int64_t n = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double v = t.at(static_cast<size_t>(i));
    if (!std::isfinite(v)) continue;  // a NaN reference is the lint's finding, not a scale
    sum += v;
    sq += v * v;
    ++n;
  }
  if (n < 2) return 0;
  const double mean = sum / static_cast<double>(n), rms = std::sqrt(sq / static_cast<double>(n));
  const double spread = std::sqrt(std::max(0.0, sq / static_cast<double>(n) - mean * mean));
  return kSpreadFraction * spread / std::max(1.0, rms);
}

double bytes_of(const Task& task, const Config& c) {
  auto r = task.resolve(c);
  return r ? static_cast<double>(r->input_bytes) + static_cast<double>(r->output_bytes) : 1e300;
}

// Rounded down to one significant digit, so the band written is never wider than the one derived.
double floor_one_digit(double x) {
  const double p = std::pow(10.0, std::floor(std::log10(x)));
  return std::floor(x / p) * p;
}

}  // namespace

bool cpu_affordable(const Task& task, const Config& c) {
  auto r = task.resolve(c);
  if (!r) return false;
  const double bytes = static_cast<double>(r->input_bytes) + static_cast<double>(r->output_bytes);
  return bytes <= kMaxBytes && r->flops.value_or(0) <= kMaxFlops;
}

Result<DerivedTolerance> derive_tolerance(torch::TorchBridge& b, const Task& task, uint64_t seed) {
  auto oracle = torch::TorchOracle::create(b, task, task.torch_reference_path());
  if (!oracle) return oracle.unexpected();
  const DType dt = task.precision();
  std::optional<std::pair<double, std::string>> smallest;  // the smallest nonzero limit, and its config
  std::vector<std::string> skipped;
  // Smallest first, and no more once the reference has taken kMaxSeconds: a FLOPs figure that is
  // only a lower bound (a transposed 3-D convolution's) does not say what a config costs.
  std::vector<const Config*> order;
  for (const auto& c : task.configs) order.push_back(&c);
  std::stable_sort(order.begin(), order.end(),
                   [&](const Config* a, const Config* b) { return bytes_of(task, *a) < bytes_of(task, *b); });
  const auto t0 = std::chrono::steady_clock::now();
  for (const Config* cp : order) {
    const Config& c = *cp;
    const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!cpu_affordable(task, c) || spent > kMaxSeconds) {
      skipped.push_back(c.name);
      continue;
    }
    auto ins = generate_inputs(task, c, seed, false);
    if (!ins) return ins.unexpected();
    auto outs = oracle->outputs(c, *ins, "cpu");
    if (!outs) return fail("config '{}': the reference failed: {}", c.name, outs.error().message);
    for (const auto& t : *outs) {
      const double limit = atol_limit(t);
      if (limit > 0 && (!smallest || limit < smallest->first)) smallest = {{limit, c.name}};
    }
  }
  DerivedTolerance d;
  if (!skipped.empty())
    d.notes.push_back(fmt::format("tolerance: config(s) {} too large to run on the CPU here (over 64 MiB, 1e10 "
                                  "FLOPs, or after {:.0f} s of others): their outputs are taken to vary no less "
                                  "than the others'",
                                  fmt::join(skipped, ", "), kMaxSeconds));
  const Tolerance def = task.tolerance_for(dt);
  if (!is_float(dt) || !smallest || smallest->first >= def.atol) return d;
  const double atol = floor_one_digit(smallest->first);
  d.toml = fmt::format("\n# Derived at import from the oracle's outputs: on config '{}' they vary so little that the\n"
                       "# default atol ({:g}) would let a constant through; atol x max(1, rms) is at most 1% of\n"
                       "# their spread on every config it was derived on.\n[tolerance]\n{} = {{ atol = {:g}, rtol = {:g} }}\n",
                       smallest->second, def.atol, dtype_name(dt), atol, def.rtol);
  d.notes.push_back(fmt::format("tolerance: {} atol {:g} (the default {:g} is more than 1% of the outputs' spread on "
                                "config '{}')",
                                dtype_name(dt), atol, def.atol, smallest->second));
  return d;
}

}  // namespace kevo::interop
