#include "interop/flop_factor.h"

#include <fmt/format.h>

#include <functional>

namespace kevo::interop {
namespace {

// FLOP factors are counts that pooling, strides and reshapes divide: floor forms up to 16 (a
// pooling window of 16 over a kept size).
constexpr int kMaxDivisor = 16;
constexpr size_t kMaxProductNames = 3;

// coef * product(num) / den (den empty: 1), exact, at dims d; nullopt where a name is missing.
std::optional<int64_t> monomial(int64_t coef, const std::vector<std::string>& num, const std::string& den, const Dims& d) {
  int64_t p = coef;
  for (const auto& n : num) {
    auto it = d.find(n);
    if (it == d.end()) return std::nullopt;
    p *= it->second;
  }
  if (den.empty()) return p;
  auto it = d.find(den);
  if (it == d.end() || it->second <= 0 || p % it->second) return std::nullopt;
  return p / it->second;
}

// Agrees at every check, and at the probes when the names are sizes (derived dims are known at
// configs only).
bool monomial_agrees(const FactorSamples& s, const Dims& base, const std::vector<std::string>& num,
                     const std::string& den, int64_t coef, bool at_probes) {
  for (const auto& [g, dv] : s.axis.probes) {
    if (!at_probes) break;
    Dims d = base;
    d[g] += dv.first;
    if (monomial(coef, num, den, d) != dv.second) return false;
  }
  for (const auto& [dims, v] : s.checks)
    if (monomial(coef, num, den, *dims) != v) return false;
  return true;
}

// A constant times a product of two or three names (repeats allowed), or a name over another (the channels per
// group of a grouped conv), that holds at `at` and every sample.
std::optional<FactorFit> fit_monomial(const FactorSamples& s, const Dims& base, const Dims& at,
                                      const std::vector<std::string>& names, bool at_probes) {
  std::vector<std::string> pick;
  std::optional<FactorFit> found;
  auto try_pick = [&](const std::string& den) {
    auto one = monomial(1, pick, "", at);
    int64_t d = den.empty() ? 1 : at.at(den);
    if (!one || *one <= 0 || (s.axis.base * d) % *one) return;
    int64_t coef = s.axis.base * d / *one;
    if (coef <= 0 || !monomial_agrees(s, base, pick, den, coef, at_probes)) return;
    const std::string num = fmt::format("{}", fmt::join(pick, "*"));
    found = den.empty() ? FactorFit{coef, pick} : FactorFit{1, {fmt::format("ceil_div({}{}, {})", coef == 1 ? "" : fmt::format("{}*", coef), num, den)}};
  };
  std::function<void(size_t)> grow = [&](size_t from) {
    if (found) return;
    if (pick.size() >= 2) try_pick("");
    for (size_t k = 0; k < names.size() && pick.size() == 1 && !found; ++k)
      if (names[k] != pick[0]) try_pick(names[k]);
    if (pick.size() == kMaxProductNames) return;
    for (size_t i = from; i < names.size() && !found; ++i) {
      pick.push_back(names[i]);
      grow(i);  // a name may repeat: height*height
      pick.pop_back();
    }
  };
  grow(0);
  return found;
}

std::optional<FactorFit> from_axis(const Axis& a, const std::vector<std::string>& order) {
  if (axis_is_constant(a)) return FactorFit{a.constant / a.divisor, {}};
  if (a.divisor == 1 && a.constant == 0 && a.coef.size() == 1) return FactorFit{a.coef.begin()->second, {a.coef.begin()->first}};
  return FactorFit{1, {paren(axis_expr(a, order))}};
}

}  // namespace

std::optional<FactorFit> fit_factor(const FactorSamples& s, const Dims& base, const std::vector<std::string>& order,
                                    const std::vector<std::string>& derived) {
  if (auto a = fit_axis(s.axis, base, s.checks, 1)) return from_axis(*a, order);
  if (auto m = fit_monomial(s, base, base, order, true)) return m;
  if (auto a = fit_axis(s.axis, base, s.checks, kMaxDivisor)) return from_axis(*a, order);
  if (!s.all_configs || !s.main_dims) return std::nullopt;
  // A derived dim, or a product with one, holds only where it was measured: at every config.
  for (const auto& d : derived)
    if (s.main_dims->count(d) && s.main_dims->at(d) == s.axis.base && monomial_agrees(s, base, {d}, "", 1, false))
      return FactorFit{1, {d}};
  std::vector<std::string> names = order;
  names.insert(names.end(), derived.begin(), derived.end());
  return fit_monomial(s, base, *s.main_dims, names, false);
}

}  // namespace kevo::interop
