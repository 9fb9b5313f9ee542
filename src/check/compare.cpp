#include "check/compare.h"

#include <cmath>
#include <cstring>
#include <mutex>

namespace kevo {

std::vector<double> to_doubles(const HostTensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  parallel_ranges(t.numel(), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) v[i] = t.at(static_cast<size_t>(i));
  });
  return v;
}

std::string format_index(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  return fmt::format("[{}]", fmt::join(idx, ", "));
}

std::string Comparison::describe(const std::vector<int64_t>& shape) const {
  if (ok) return fmt::format("all {} elements within tolerance (max abs err {:.3g}, max rel err {:.3g})",
                             count, max_abs_err, max_rel_err);
  std::string s = fmt::format("{} of {} elements wrong", mismatches, count);
  if (unwritten) s += fmt::format(" ({} never written)", unwritten);
  else if (nonfinite) s += fmt::format(" ({} NaN/Inf where the reference is finite)", nonfinite);
  if (first_bad >= 0)
    s += fmt::format("; first at {}: got {:.6g}, want {:.6g}", format_index(first_bad, shape),
                     first_got, first_want);
  s += fmt::format("; max abs err {:.3g}, max rel err {:.3g}", max_abs_err, max_rel_err);
  return s;
}

namespace {

bool is_poison(const HostTensor& t, size_t i) {
  size_t w = dtype_size(t.dtype);
  const uint8_t* p = t.bytes.data() + i * w;
  for (size_t k = 0; k < w; ++k)
    if (p[k] != kPoisonByte) return false;
  return true;
}

}  // namespace

Comparison compare_output(const HostTensor& got, const std::vector<double>& want, Tolerance tol,
                          bool check_poison) {
  Comparison c;
  c.count = got.numel();
  if (static_cast<size_t>(c.count) != want.size()) {
    c.ok = false;
    c.reason = "mismatch";
    c.mismatches = c.count;
    return c;
  }
  // Absolute tolerance scales with the reference's magnitude (its RMS, at least 1) so the same
  // task tolerance works for wide-distribution draws whose outputs are larger.
  std::mutex mu;
  double ss = 0;
  int64_t finite_n = 0;
  parallel_ranges(c.count, [&](int64_t b, int64_t e) {
    double s = 0;
    int64_t n = 0;
    for (int64_t i = b; i < e; ++i)
      if (std::isfinite(want[i])) s += want[i] * want[i], ++n;
    std::lock_guard<std::mutex> l(mu);
    ss += s;
    finite_n += n;
  });
  double scale = std::max(1.0, finite_n ? std::sqrt(ss / finite_n) : 1.0);
  double atol = tol.atol * scale;
  // Chunks are checked in parallel; the first failing index is the minimum over chunks.
  parallel_ranges(c.count, [&](int64_t b, int64_t e) {
    Comparison p;
    for (int64_t i = b; i < e; ++i) {
      double g = got.at(static_cast<size_t>(i)), w = want[static_cast<size_t>(i)];
      bool bad = false;
      if (!std::isfinite(w)) {
        // Non-finite reference: the candidate must produce the same kind of value.
        bad = !(std::isnan(w) ? std::isnan(g) : g == w);
      } else if (!std::isfinite(g)) {
        bad = true;
        if (check_poison && is_poison(got, static_cast<size_t>(i))) ++p.unwritten;
        else ++p.nonfinite;
      } else {
        double err = std::fabs(g - w);
        p.max_abs_err = std::max(p.max_abs_err, err);
        if (err > 0) p.max_rel_err = std::max(p.max_rel_err, err / std::max(std::fabs(w), 1e-30));
        bad = err > atol + tol.rtol * std::fabs(w);
        if (bad && check_poison && is_poison(got, static_cast<size_t>(i))) ++p.unwritten;
      }
      if (bad) {
        if (p.mismatches == 0) p.first_bad = i, p.first_got = g, p.first_want = w;
        ++p.mismatches;
      }
    }
    std::lock_guard<std::mutex> l(mu);
    c.unwritten += p.unwritten;
    c.nonfinite += p.nonfinite;
    c.max_abs_err = std::max(c.max_abs_err, p.max_abs_err);
    c.max_rel_err = std::max(c.max_rel_err, p.max_rel_err);
    if (p.mismatches && (c.first_bad < 0 || p.first_bad < c.first_bad))
      c.first_bad = p.first_bad, c.first_got = p.first_got, c.first_want = p.first_want;
    c.mismatches += p.mismatches;
  });
  c.ok = c.mismatches == 0;
  if (!c.ok) c.reason = c.unwritten ? "unwritten" : c.nonfinite ? "nan" : "mismatch";
  return c;
}

Comparison compare_runs(const HostTensor& a, const HostTensor& b, Tolerance tol) {
  Comparison c = compare_output(b, to_doubles(a), tol, false);
  if (!c.ok) c.reason = "nondeterministic";
  return c;
}

}  // namespace kevo
