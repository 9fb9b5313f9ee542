#include "interop/import_flops.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <deque>
#include <optional>
#include <set>

namespace kevo::interop {
namespace {

// Moves of a size inside a floor that, with the probe's and the configs' values, give the floor
// several residues of its divisor; and one move larger than twice any divisor fitted (16), which
// every size gets: a floor that names the wrong size (two sizes equal at every config) then misses.
constexpr int64_t kFloorMoves[] = {1, 2, 3};
constexpr int64_t kWideMove = 35;

// The dims a probe has: its sizes, and each derived dim read off the tensor entries it names;
// nullopt where two entries that share a derived dim (equal at every config) differ there: the
// task's dims cannot describe that probe.
std::optional<Dims> dims_of(const ProblemShape& p, const Dims& sizes, const ConfigProbe& probe) {
  Dims d = sizes;
  for (size_t i = 0; i < p.axes.size() && i < probe.slots.size(); ++i)
    for (size_t k = 0; k < p.axes[i].size() && k < probe.slots[i].shape.size(); ++k) {
      const std::string& name = p.axes[i][k].derived;
      if (name.empty()) continue;
      auto [it, fresh] = d.try_emplace(name, probe.slots[i].shape[k]);
      if (!fresh && it->second != probe.slots[i].shape[k]) return std::nullopt;
    }
  return d;
}

struct Samples {
  std::deque<Dims> dims;  // stable addresses
  std::deque<FlopCount> counts;
  FlopSamples in;
};

Status add_sample(Samples& s, const std::string& name, Dims dims, const ConfigProbe& probe) {
  if (!probe.flops) return fail("config '{}' was not counted", name);
  auto fc = flop_count_from(*probe.flops);
  if (!fc) return fc.unexpected();
  s.dims.push_back(std::move(dims));
  s.counts.push_back(std::move(*fc));
  s.in.configs.push_back({name, {&s.dims.back(), &s.counts.back()}});
  return {};
}

// The names inside the floor divisions of an expression (`ceil_div(2*depth + k - 4, 2)`: depth, k).
std::set<std::string> names_in_floors(const std::string& expr) {
  std::set<std::string> out;
  for (size_t at = expr.find("ceil_div("); at != std::string::npos; at = expr.find("ceil_div(", at + 1)) {
    const size_t end = expr.find(')', at);
    std::string name;
    for (size_t i = at + 9; i <= end && i < expr.size(); ++i) {
      const unsigned char c = static_cast<unsigned char>(expr[i]);
      if (std::isalnum(c) || c == '_') {
        name += expr[i];
        continue;
      }
      if (!name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]))) out.insert(name);
      name.clear();
    }
  }
  return out;
}

// The extra samples, each one size moved alone; loads the module rejects or that change the
// tensors' structure are left out.
void add_floor_checks(Samples& s, const ProblemShape& p, const std::string& expr, const ValidateConfig& probe) {
  const auto floored = names_in_floors(expr);
  std::set<std::string> followers;
  for (const auto& [lead, f] : p.tied) followers.insert(f.begin(), f.end());
  for (const auto& g : p.sizes) {
    if (followers.count(g)) continue;  // moved with its lead
    std::vector<int64_t> moves{kWideMove};
    if (floored.count(g)) moves.insert(moves.begin(), std::begin(kFloorMoves), std::end(kFloorMoves));
    for (int64_t move : moves) {
      Dims sizes = p.base_dims;
      sizes[g] += move;
      if (auto t = p.tied.find(g); t != p.tied.end())
        for (const auto& f : t->second) sizes[f] = sizes[g];
      auto pr = probe(sizes);
      if (!pr || !same_structure(pr->slots, p.base_slots)) continue;
      if (auto dims = dims_of(p, sizes, *pr)) (void)add_sample(s, fmt::format("{}+{}", g, move), std::move(*dims), *pr);
    }
  }
}

}  // namespace

void derive_task_flops(ProblemShape& p, const ConfigProbe& main, const ValidateConfig& probe) {
  if (!main.flops) return p.notes.push_back("flops not derived: the counter could not follow the forward");
  auto base = flop_count_from(*main.flops);
  if (!base) return p.notes.push_back("flops not derived: " + base.error().message);
  Samples s;
  s.in.base = &*base;
  s.in.base_dims = &p.base_dims;
  s.in.main_dims = &p.configs.front().dims;
  s.in.order = p.sizes;
  std::copy_if(p.dims.begin(), p.dims.end(), std::back_inserter(s.in.derived),
               [&](const std::string& d) { return std::find(p.sizes.begin(), p.sizes.end(), d) == p.sizes.end(); });
  for (const auto& [g, dp] : p.probes) {
    if (!dp.second.flops) return p.notes.push_back("flops not derived: a probe was not counted");
    auto fc = flop_count_from(*dp.second.flops);
    if (!fc) return p.notes.push_back("flops not derived: " + fc.error().message);
    s.in.probes[g] = {dp.first, *fc};
  }
  for (const auto& cf : p.configs)
    if (cf.name != "main")
      if (auto st = add_sample(s, cf.name, cf.dims, cf.probe); !st)
        return p.notes.push_back("flops not derived: " + st.error().message);
  auto f = derive_flops(s.in);
  if (f && f->expr.find("ceil_div(") != std::string::npos) {
    const size_t configs = s.in.configs.size();
    add_floor_checks(s, p, f->expr, probe);
    if (s.in.configs.size() > configs) f = derive_flops(s.in);
    if (f && s.in.configs.size() > configs)
      p.notes.push_back(fmt::format("flops: the floor divisions were checked at {} more sizes",
                                    s.in.configs.size() - configs));
  }
  if (!f) return p.notes.push_back("flops not derived: " + f.error().message);
  if (!base->unknown.empty())
    p.notes.push_back(fmt::format("flops: ops counted as one per output element without being known "
                                  "pointwise: {}", fmt::join(base->unknown, ", ")));
  p.flops = *f;
}

}  // namespace kevo::interop
