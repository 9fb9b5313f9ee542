#include "interop/flops.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "interop/flop_factor.h"
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

FlopCount merge_repeats(const FlopCount& c) {
  FlopCount out;
  out.total = c.total;
  out.unknown = c.unknown;
  std::map<std::tuple<std::string, std::string, int64_t, std::vector<int64_t>>, size_t> at;
  for (const auto& r : c.records) {
    auto [it, fresh] = at.try_emplace({r.op, r.kind, r.coef, r.factors}, out.records.size());
    if (fresh) {
      out.records.push_back(r);
      out.records.back().factors.push_back(1);
    } else {
      ++out.records[it->second].factors.back();
    }
  }
  return out;
}

namespace {

using Probes = std::map<std::string, std::pair<int64_t, FlopCount>>;

// Record i's term: its constant part and its non-constant factors, sorted; nullopt with the reason
// when a factor has no expression.
Result<std::pair<double, std::string>> term_of(const FlopSamples& in, const FlopCount& base, const Probes& probes,
                                               const std::vector<const std::pair<std::string, FlopSample>*>& usable,
                                               size_t i) {
  const FlopRecord& r = base.records[i];
  double coef = static_cast<double>(r.coef);
  std::vector<std::string> factors;
  for (size_t k = 0; k < r.factors.size(); ++k) {
    FactorSamples s;
    s.axis.base = r.factors[k];
    for (const auto& [g, p] : probes) s.axis.probes[g] = {p.first, p.second.records[i].factors[k]};
    for (const auto* c : usable) s.checks.emplace_back(c->second.dims, c->second.count->records[i].factors[k]);
    s.main_dims = in.main_dims;
    s.all_configs = usable.size() == in.configs.size();
    auto f = fit_factor(s, *in.base_dims, in.order, in.derived);
    if (!f) return fail("factor {} of {} ({} at the original sizes) is no expression of the sizes", k, r.op, r.factors[k]);
    coef *= static_cast<double>(f->coef);
    factors.insert(factors.end(), f->names.begin(), f->names.end());
  }
  std::sort(factors.begin(), factors.end());
  std::string key;
  for (const auto& f : factors) {
    if (!key.empty()) key += '*';
    key += f;
  }
  return std::pair{coef, key};
}

std::string sum_text(const std::vector<std::pair<std::string, double>>& terms) {
  std::string expr;
  for (const auto& [key, coef] : terms) {
    if (coef == 0) continue;
    std::string c = fmt::format("{:.0f}", coef);
    std::string t = key.empty() ? c : (coef == 1 ? key : c + "*" + key);
    if (!expr.empty()) expr += " + ";  // (not a ternary into operator+: GCC 12 -Wrestrict false positive)
    expr += t;
  }
  if (expr.empty()) expr.assign(1, '0');  // (not operator=(const char*): GCC 12 -Wrestrict false positive)
  return expr;
}

Result<DerivedFlops> derive_aligned(const FlopSamples& in, const FlopCount& base, const Probes& probes,
                                    const std::vector<std::pair<std::string, FlopSample>>& configs) {
  std::vector<const std::pair<std::string, FlopSample>*> usable;
  for (const auto& c : configs)
    if (aligned(base, *c.second.count)) usable.push_back(&c);
  // Terms by their non-constant factors; constants go into the coefficient.
  std::vector<std::pair<std::string, double>> terms;
  for (size_t i = 0; i < base.records.size(); ++i) {
    auto t = term_of(in, base, probes, usable, i);
    if (!t) return t.unexpected();
    auto it = std::find_if(terms.begin(), terms.end(), [&](const auto& x) { return x.first == t->second; });
    if (it == terms.end())
      terms.emplace_back(t->second, t->first);
    else
      it->second += t->first;
  }
  DerivedFlops out{sum_text(terms), {}};
  const Dims& at_main = in.main_dims ? *in.main_dims : *in.base_dims;
  auto v = eval_expr(out.expr, at_main);
  if (!v || !same_count(*v, base.total))
    return fail("the derived expression {} does not give the counted {} at the original sizes", out.expr, base.total);
  for (const auto* c : usable) {
    auto cv = eval_expr(out.expr, *c->second.dims);
    if (!cv || !same_count(*cv, c->second.count->total))
      return fail("the derived expression {} gives {} at config '{}', the counter {}", out.expr,
                  cv ? *cv : -1.0, c->first, c->second.count->total);
    if (out.checked_at.size() < 2) out.checked_at.push_back(c->first);
  }
  if (out.checked_at.size() < 2) return fail("fewer than two configs to check the derived expression against");
  return out;
}

}  // namespace

Result<DerivedFlops> derive_flops(const FlopSamples& in) {
  std::string moved;
  for (const auto& [g, p] : in.probes)
    if (moved.empty() && !aligned(*in.base, p.second)) moved = g;
  if (moved.empty()) return derive_aligned(in, *in.base, in.probes, in.configs);
  // A loop over a size (an RNN's time steps) runs the same operations more often: the records,
  // merged with their repeats, align again, each repeat count one more factor.
  FlopCount mbase = merge_repeats(*in.base);
  Probes mprobes;
  for (const auto& [g, p] : in.probes) {
    mprobes[g] = {p.first, merge_repeats(p.second)};
    if (!aligned(mbase, mprobes[g].second)) return fail("the operations run change when '{}' changes", moved);
  }
  std::vector<FlopCount> counts;
  counts.reserve(in.configs.size());
  for (const auto& c : in.configs) counts.push_back(merge_repeats(*c.second.count));
  std::vector<std::pair<std::string, FlopSample>> mconfigs;
  for (size_t i = 0; i < in.configs.size(); ++i)
    mconfigs.push_back({in.configs[i].first, {in.configs[i].second.dims, &counts[i]}});
  return derive_aligned(in, mbase, mprobes, mconfigs);
}

}  // namespace kevo::interop
