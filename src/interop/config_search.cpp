#include "interop/config_search.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace kevo::interop {
namespace {

// Tries per variant at most: each is one load of the module.
constexpr size_t kMaxTries = 12;
constexpr int kVisibleWanted = 4, kHeldWanted = 2;  // main included in the visible count

using Target = std::function<int64_t(const std::string&, int64_t)>;

struct Variant {
  std::string name;
  bool held_out;
  Target target;
  bool one_size;  // the change applies to one size (the first that works, largest first)
};

// Sizes by decreasing value (ties in file order): the largest is the usual place for a change.
std::vector<std::string> by_size(const std::vector<std::string>& sizes, const Dims& base) {
  std::vector<std::string> s = sizes;
  std::stable_sort(s.begin(), s.end(), [&](const auto& a, const auto& b) { return base.at(a) > base.at(b); });
  return s;
}

int64_t snap(int64_t target, int64_t factor) {
  int64_t m = std::max<int64_t>(1, std::llround(static_cast<double>(target) / static_cast<double>(factor)));
  return m * factor;
}

// The dims to try for one variant, most faithful first.
std::vector<Dims> tries_for(const Variant& v, const std::vector<std::string>& sizes, const Dims& base) {
  std::vector<Dims> out;
  auto changed_only = [&](const std::vector<std::string>& which, int level) {
    Dims d = base;
    for (const auto& g : which) {
      int64_t t = v.target(g, base.at(g));
      if (level > 0) {
        auto divs = divisors_of(base.at(g));
        if (divs.empty()) continue;
        int64_t f = divs[std::min<size_t>(static_cast<size_t>(level - 1), divs.size() - 1)];
        t = snap(t, f);
      }
      d[g] = std::max<int64_t>(1, t);
    }
    return d;
  };
  auto add = [&](const std::vector<std::string>& grp, int level) {
    Dims d = changed_only(grp, level);
    if (d != base) out.push_back(d);
  };
  // The whole change with ever larger kept factors, then one size at a time.
  if (!v.one_size)
    for (int level = 0; level <= 6; ++level) add(sizes, level);
  for (int level = 0; level <= 2; ++level)
    for (const auto& g : by_size(sizes, base)) add({g}, level);
  return out;
}

// A config where some tensor has a zero-sized axis, or where the forward does no work (a pooling
// window larger than its input), is no test of a kernel.
bool empty_tensor(const ConfigProbe& p) {
  for (const auto& s : p.slots)
    for (int64_t e : s.shape)
      if (e <= 0) return true;
  return p.flops && p.flops->contains("total") && (*p.flops)["total"].is_number() &&
         (*p.flops)["total"].get<double>() <= 0;
}

std::vector<Variant> variants(const std::vector<std::string>& sizes) {
  return {
      {"ragged", false, [](const std::string&, int64_t x) { return x + 7; }, true},
      {"minus_one", false, [](const std::string&, int64_t x) { return x > 1 ? x - 1 : x; }, false},
      {"small", false, [](const std::string&, int64_t x) { return x >= 32 ? std::max<int64_t>(2, x / 16) + 1 : x; }, false},
      {"plus_one", false, [](const std::string&, int64_t x) { return x + 1; }, false},
      {"held", true, [](const std::string&, int64_t x) { return x >= 32 ? x * 3 / 4 + 3 : x; }, false},
      {"held_unit", true,
       [first = sizes.front()](const std::string& g, int64_t x) { return g == first ? int64_t{1} : x; }, false},
      {"held_plus", true, [](const std::string&, int64_t x) { return x + 13; }, true},
  };
}

}  // namespace

std::vector<int64_t> divisors_of(int64_t v) {
  std::vector<int64_t> lo, hi;
  for (int64_t d = 2; d * d <= v; ++d)
    if (v % d == 0) {
      lo.push_back(d);
      if (d != v / d) hi.push_back(v / d);
    }
  std::reverse(hi.begin(), hi.end());
  lo.insert(lo.end(), hi.begin(), hi.end());
  if (v > 1) lo.push_back(v);
  return lo;
}

std::vector<FoundConfig> search_configs(const std::vector<std::string>& sizes, const FoundConfig& main,
                                        const ValidateConfig& validate, std::vector<std::string>& notes) {
  std::vector<FoundConfig> cfgs{main};
  std::set<Dims> seen{main.dims};
  int visible = 1, held = 0;
  for (const auto& v : variants(sizes)) {
    if ((v.held_out && held >= kHeldWanted) || (!v.held_out && visible >= kVisibleWanted)) continue;
    std::string first_error;
    size_t tried = 0;
    bool found = false;
    for (const auto& d : tries_for(v, sizes, main.dims)) {
      if (tried >= kMaxTries) break;
      if (!seen.insert(d).second) continue;
      ++tried;
      auto p = validate(d);
      if (p && !same_structure(p->slots, main.probe.slots))
        p = Result<ConfigProbe>(Unexpected{Error{"it changes the number or rank of tensors"}});
      if (p && empty_tensor(*p)) p = Result<ConfigProbe>(Unexpected{Error{"a tensor or an operation would be empty"}});
      if (!p) {
        if (first_error.empty()) first_error = p.error().message.substr(0, p.error().message.find('\n'));
        continue;
      }
      if (tried > 1) notes.push_back(fmt::format("config '{}': the first choice was rejected ({}); found a nearby one", v.name, first_error));
      cfgs.push_back({v.name, d, v.held_out, std::move(*p)});
      (v.held_out ? held : visible)++;
      found = true;
      break;
    }
    if (!found && tried > 0)
      notes.push_back(fmt::format("config '{}' dropped after {} tries (the module rejects them): {}", v.name,
                                  tried, first_error));
  }
  return cfgs;
}

}  // namespace kevo::interop
