#include "interop/shape_fit.h"

#include <fmt/format.h>

#include <cmath>

namespace kevo::interop {

std::vector<Slot> slots_of(const torch::Description& d) {
  std::vector<Slot> s;
  for (const auto& a : d.args)
    if (!a.scalar) s.push_back({"arg:" + a.name, a.name, a.tensor.shape});
  for (const auto& w : d.weights) s.push_back({"weight:" + w.name, w.name, w.shape});
  for (const auto& o : d.outputs) s.push_back({"out:" + o.name, o.name, o.shape});
  return s;
}

bool same_structure(const std::vector<Slot>& a, const std::vector<Slot>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].key != b[i].key || a[i].shape.size() != b[i].shape.size()) return false;
  return true;
}

namespace {

std::string linear_part(const Axis& a, const std::vector<std::string>& order, int64_t constant) {
  std::string s;
  for (const auto& g : order) {
    auto it = a.coef.find(g);
    if (it == a.coef.end() || it->second == 0) continue;
    int64_t c = it->second;
    std::string term = std::abs(c) == 1 ? g : fmt::format("{}*{}", std::abs(c), g);
    if (s.empty())
      s = c < 0 ? "-" + term : term;
    else
      s += (c < 0 ? " - " : " + ") + term;
  }
  if (s.empty()) return fmt::format("{}", constant);
  if (constant > 0) s += fmt::format(" + {}", constant);
  if (constant < 0) s += fmt::format(" - {}", -constant);
  return s;
}

int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

bool agrees(const Axis& a, const std::vector<std::pair<const Dims*, int64_t>>& checks) {
  for (const auto& [dims, v] : checks) {
    for (const auto& [g, c] : a.coef)
      if (!dims->count(g)) return false;
    if (eval_axis(a, *dims) != v) return false;
  }
  return true;
}

// The coefficients c a size moved by delta may have when floor((x + c*delta) / div) moved by
// moved: floors of equal divisors differ by at most div - 1 from the exact quotient, so
// |c*delta - div*moved| <= div - 1. Sizes the entry does not follow get only c = 0 this way,
// which keeps the search small for modules with many sizes.
std::vector<int64_t> coefficients(int64_t delta, int64_t moved, int64_t div) {
  if (delta < 0) {
    delta = -delta;
    moved = -moved;
  }
  const int64_t lo = div * moved - (div - 1), hi = div * moved + (div - 1);
  std::vector<int64_t> out;
  for (int64_t c = -floor_div(-lo, delta); c * delta <= hi; ++c) out.push_back(c);
  return out;
}

}  // namespace

std::string axis_expr(const Axis& a, const std::vector<std::string>& order) {
  if (!a.derived.empty()) return a.derived;
  if (a.divisor == 1) return linear_part(a, order, a.constant);
  // floor(x / s) == ceil_div(x - s + 1, s): the expression language has ceil_div only.
  return fmt::format("ceil_div({}, {})", linear_part(a, order, a.constant - a.divisor + 1), a.divisor);
}

int64_t eval_axis(const Axis& a, const Dims& dims) {
  int64_t v = a.constant;
  for (const auto& [g, c] : a.coef) v += c * dims.at(g);
  return floor_div(v, a.divisor);
}

bool axis_is_constant(const Axis& a) {
  if (!a.derived.empty()) return false;
  for (const auto& [g, c] : a.coef)
    if (c) return false;
  return true;
}

std::optional<Axis> fit_axis(const AxisSamples& s, const Dims& base,
                             const std::vector<std::pair<const Dims*, int64_t>>& checks, int max_divisor) {
  std::vector<std::pair<const Dims*, int64_t>> all = checks;
  std::vector<Dims> probe_dims;
  probe_dims.reserve(s.probes.size());
  for (const auto& [g, dv] : s.probes) {
    Dims d = base;
    d[g] += dv.first;
    probe_dims.push_back(d);
  }
  size_t k = 0;
  for (const auto& [g, dv] : s.probes) all.emplace_back(&probe_dims[k++], dv.second);
  all.emplace_back(&base, s.base);
  for (int64_t div = 1; div <= max_divisor; ++div) {
    std::vector<std::pair<std::string, std::vector<int64_t>>> choices;
    size_t combos = 1;
    for (const auto& [g, dv] : s.probes) {
      choices.emplace_back(g, coefficients(dv.first, dv.second - s.base, div));
      combos *= choices.back().second.size();
    }
    if (combos == 0 || combos > 243) continue;
    for (size_t idx = 0; idx < combos; ++idx) {
      Axis a;
      a.divisor = div;
      size_t rest = idx;
      int64_t lin = 0;
      for (const auto& [g, opts] : choices) {
        int64_t c = opts[rest % opts.size()];
        rest /= opts.size();
        if (c) a.coef[g] = c;
        lin += c * base.at(g);
      }
      for (int64_t off = 0; off < div; ++off) {  // floor((lin + b)/div) == base value
        a.constant = div * s.base - lin + off;
        if (agrees(a, all)) return a;
      }
    }
  }
  return std::nullopt;
}

std::string paren(const std::string& e) {
  if (e.rfind("ceil_div(", 0) == 0 && e.back() == ')' && e.find(')') == e.size() - 1) return e;
  return e.find_first_of("+- ") == std::string::npos ? e : "(" + e + ")";
}

}  // namespace kevo::interop
