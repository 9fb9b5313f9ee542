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

namespace {

// `got_at(i)` and `want(i)` read element i as a double.
template <class Got, class Want>
Comparison compare_with(const HostTensor& got, const Got& got_at, int64_t want_size, const Want& want,
                        Tolerance tol, bool check_poison) {
  Comparison c;
  c.count = got.numel();
  if (c.count != want_size) {
    c.ok = false;
    c.reason = Reason::kMismatch;
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
      if (double w = want(i); std::isfinite(w)) s += w * w, ++n;
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
      double g = got_at(i), w = want(i);
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
  if (!c.ok) c.reason = c.unwritten ? Reason::kUnwritten : c.nonfinite ? Reason::kNan : Reason::kMismatch;
  return c;
}

// Calls f with an element reader for t: a direct load for f32 (most outputs, and the hot loop
// over GB-sized tensors), HostTensor::at otherwise.
template <class F>
auto with_reader(const HostTensor& t, const F& f) {
  if (t.dtype == DType::F32) {
    const float* p = reinterpret_cast<const float*>(t.bytes.data());
    return f([p](int64_t i) { return static_cast<double>(p[i]); });
  }
  return f([&t](int64_t i) { return t.at(static_cast<size_t>(i)); });
}

Comparison compare_tensors(const HostTensor& got, const HostTensor& want, Tolerance tol, bool check_poison) {
  return with_reader(got, [&](const auto& g) {
    return with_reader(want, [&](const auto& w) { return compare_with(got, g, want.numel(), w, tol, check_poison); });
  });
}

}  // namespace

Comparison compare_output(const HostTensor& got, const Expected& want, Tolerance tol, bool check_poison) {
  if (want.tensor) return compare_tensors(got, *want.tensor, tol, check_poison);
  return compare_output(got, want.values, tol, check_poison);
}

Comparison compare_output(const HostTensor& got, const std::vector<double>& want, Tolerance tol,
                          bool check_poison) {
  return with_reader(got, [&](const auto& g) {
    return compare_with(got, g, static_cast<int64_t>(want.size()),
                        [&](int64_t i) { return want[static_cast<size_t>(i)]; }, tol, check_poison);
  });
}

int64_t count_unwritten(const HostTensor& t) {
  std::mutex mu;
  int64_t n = 0;
  parallel_ranges(t.numel(), [&](int64_t b, int64_t e) {
    int64_t k = 0;
    for (int64_t i = b; i < e; ++i)
      if (!std::isfinite(t.at(static_cast<size_t>(i))) && is_poison(t, static_cast<size_t>(i))) ++k;
    std::lock_guard<std::mutex> l(mu);
    n += k;
  });
  return n;
}

Comparison compare_runs(const HostTensor& a, const HostTensor& b, Tolerance tol) {
  Comparison c = compare_tensors(b, a, tol, false);
  if (!c.ok) c.reason = Reason::kNondeterministic;
  return c;
}

}  // namespace kevo
