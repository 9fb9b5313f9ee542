#include "interop/flops.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "task/expr.h"

namespace kevo::interop {
namespace {

bool aligned(const FlopCount& a, const FlopCount& b) {
  if (a.records.size() != b.records.size()) return false;
  for (size_t i = 0; i < a.records.size(); ++i)
    if (a.records[i].op != b.records[i].op || a.records[i].coef != b.records[i].coef ||
        a.records[i].factors.size() != b.records[i].factors.size())
      return false;
  return true;
}

// The counter's own total differs from a sum of integers only by rounding of the double.
bool same_count(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max({1.0, std::fabs(a), std::fabs(b)}); }

}  // namespace

Result<FlopCount> flop_count_from(const torch::ojson& r) {
  FlopCount c;
  if (!r.contains("records") || !r["records"].is_array()) return fail("count_flops: reply without records");
  for (const auto& j : r["records"]) {
    FlopRecord rec;
    rec.op = j.value("op", "");
    rec.kind = j.value("kind", "");
    rec.coef = j.value("coef", int64_t{1});
    for (const auto& f : j["factors"]) rec.factors.push_back(f.get<int64_t>());
    c.records.push_back(std::move(rec));
  }
  c.total = r.value("total", 0.0);
  if (r.contains("unknown"))
    for (const auto& u : r["unknown"]) c.unknown.push_back(u.get<std::string>());
  return c;
}

Result<FlopCount> count_flops(torch::TorchBridge& b) {
  auto r = b.request({{"op", "count_flops"}});
  if (!r) return r.unexpected();
  return flop_count_from(*r);
}

Result<DerivedFlops> derive_flops(const FlopCount& base, const Dims& base_dims,
                                  const std::map<std::string, std::pair<int64_t, FlopCount>>& probes,
                                  const std::vector<std::pair<std::string, FlopSample>>& configs,
                                  const std::vector<std::string>& order) {
  for (const auto& [g, p] : probes)
    if (!aligned(base, p.second)) return fail("the operations run change when '{}' changes", g);
  std::vector<const std::pair<std::string, FlopSample>*> usable;
  for (const auto& c : configs)
    if (aligned(base, *c.second.count)) usable.push_back(&c);
  // Terms by their non-constant factors; constants go into the coefficient.
  std::vector<std::pair<std::string, double>> terms;
  for (size_t i = 0; i < base.records.size(); ++i) {
    const FlopRecord& r = base.records[i];
    double coef = static_cast<double>(r.coef);
    std::vector<std::string> factors;
    for (size_t k = 0; k < r.factors.size(); ++k) {
      AxisSamples s;
      s.base = r.factors[k];
      for (const auto& [g, p] : probes) s.probes[g] = {p.first, p.second.records[i].factors[k]};
      std::vector<std::pair<const Dims*, int64_t>> checks;
      for (const auto* c : usable) checks.emplace_back(c->second.dims, c->second.count->records[i].factors[k]);
      auto a = fit_axis(s, base_dims, checks, 8);
      if (!a)
        return fail("factor {} of {} ({} at the original sizes) is no expression of the sizes", k, r.op, r.factors[k]);
      if (axis_is_constant(*a))
        coef *= static_cast<double>(a->constant / a->divisor);
      else
        factors.push_back(paren(axis_expr(*a, order)));
    }
    std::sort(factors.begin(), factors.end());
    std::string key;
    for (const auto& f : factors) {
      if (!key.empty()) key += '*';
      key += f;
    }
    auto it = std::find_if(terms.begin(), terms.end(), [&](const auto& t) { return t.first == key; });
    if (it == terms.end())
      terms.emplace_back(key, coef);
    else
      it->second += coef;
  }
  std::string expr;
  for (const auto& [key, coef] : terms) {
    if (coef == 0) continue;
    std::string c = fmt::format("{:.0f}", coef);
    std::string t = key.empty() ? c : (coef == 1 ? key : c + "*" + key);
    if (!expr.empty()) expr += " + ";  // (not a ternary into operator+: GCC 12 -Wrestrict false positive)
    expr += t;
  }
  if (expr.empty()) expr.assign(1, '0');  // (not operator=(const char*): GCC 12 -Wrestrict false positive)
  DerivedFlops out{expr, {}};
  auto v = eval_expr(expr, base_dims);
  if (!v || !same_count(*v, base.total))
    return fail("the derived expression {} does not give the counted {} at the original sizes", expr, base.total);
  for (const auto* c : usable) {
    if (out.checked_at.size() >= 2) break;
    auto cv = eval_expr(expr, *c->second.dims);
    if (!cv || !same_count(*cv, c->second.count->total))
      return fail("the derived expression {} gives {} at config '{}', the counter {}", expr,
                  cv ? *cv : -1.0, c->first, c->second.count->total);
    out.checked_at.push_back(c->first);
  }
  if (out.checked_at.size() < 2) return fail("fewer than two configs to check the derived expression against");
  return out;
}

}  // namespace kevo::interop
