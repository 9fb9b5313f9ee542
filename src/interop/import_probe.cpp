#include "interop/import_probe.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "interop/import_flops.h"

namespace kevo::interop {
namespace fs = std::filesystem;

namespace {

struct Ctx {
  torch::TorchBridge& b;
  const fs::path& file;
  const std::string& where;
  uint64_t seed;
};

// The overrides a load needs for `dims`: tied sizes follow their dim.
Dims overrides_for(const Dims& dims, const std::map<std::string, std::vector<std::string>>& tied) {
  Dims out = dims;
  for (const auto& [lead, followers] : tied)
    if (auto it = dims.find(lead); it != dims.end())
      for (const auto& f : followers) out[f] = it->second;
  return out;
}

// A shapes-only load at `dims` with its description and FLOP count (the count is optional: an
// op the counter cannot follow costs the FLOP expression only).
Result<ConfigProbe> probe_at(const Ctx& c, const Dims& dims, const std::map<std::string, std::vector<std::string>>& tied = {}) {
  if (auto s = c.b.load(c.file, overrides_for(dims, tied), c.seed, true); !s)
    return Unexpected{relabel(s.error(), c.file, c.where)};
  auto d = c.b.describe(false);
  if (!d) return Unexpected{relabel(d.error(), c.file, c.where)};
  ConfigProbe p{slots_of(*d), std::nullopt};
  if (auto r = c.b.request({{"op", "count_flops"}}); r) p.flops = *r;
  return p;
}

enum class SizeEffect { Dim, NoShape, OutputsOnly, Mixed, Structure, Rejected };

// How moving a size by delta changes the tensors.
SizeEffect effect_of(const std::vector<Slot>& base, const std::vector<Slot>& moved, int64_t delta) {
  if (!same_structure(base, moved)) return SizeEffect::Structure;
  bool up = false, down = false, input_side = false;
  for (size_t i = 0; i < base.size(); ++i)
    for (size_t k = 0; k < base[i].shape.size(); ++k) {
      int64_t d = moved[i].shape[k] - base[i].shape[k];
      if (!d) continue;
      ((d > 0) == (delta > 0) ? up : down) = true;
      input_side |= base[i].key.rfind("out:", 0) != 0;
    }
  if (!up && !down) return SizeEffect::NoShape;
  if (up && down) return SizeEffect::Mixed;
  return input_side ? SizeEffect::Dim : SizeEffect::OutputsOnly;
}

// Sizes rejected one at a time may be accepted together when they are equal: moved as one.
void tie_equal_sizes(const Ctx& c, ProblemShape& p, const std::vector<std::pair<std::string, int64_t>>& rejected) {
  std::set<std::string> done;
  for (size_t i = 0; i < rejected.size(); ++i) {
    const auto& [lead, v] = rejected[i];
    if (done.count(lead)) continue;
    std::vector<std::string> followers;
    for (size_t j = i + 1; j < rejected.size(); ++j)
      if (rejected[j].second == v && !done.count(rejected[j].first)) followers.push_back(rejected[j].first);
    if (followers.empty()) continue;
    std::map<std::string, std::vector<std::string>> tie{{lead, followers}};
    auto probe = probe_at(c, {{lead, v + 7}}, tie);
    if (!probe || effect_of(p.base_slots, probe->slots, 7) != SizeEffect::Dim) continue;
    p.sizes.push_back(lead);
    p.base_dims[lead] = v;
    p.probes[lead] = {7, std::move(*probe)};
    p.tied[lead] = followers;
    done.insert(followers.begin(), followers.end());
    p.notes.push_back(fmt::format("'{}' varies with '{}': the module accepts them only when equal", fmt::join(followers, "', '"), lead));
  }
}

// 1. Which sizes are dims: those whose change moves an input or weight shape, all in one direction.
Status find_sizes(const Ctx& c, ProblemShape& p) {
  std::vector<std::pair<std::string, int64_t>> rejected;
  for (const auto& [g, v] : p.base.globals) {
    SizeEffect e = SizeEffect::Rejected;
    for (int64_t delta : {int64_t{7}, v}) {
      auto probe = probe_at(c, {{g, v + delta}});
      if (!probe) continue;
      e = effect_of(p.base_slots, probe->slots, delta);
      if (e == SizeEffect::Dim) {
        p.sizes.push_back(g);
        p.base_dims[g] = v;
        p.probes[g] = {delta, std::move(*probe)};
      }
      break;
    }
    if (e == SizeEffect::Rejected) rejected.push_back({g, v});
    const char* why = nullptr;
    switch (e) {
      case SizeEffect::Dim: case SizeEffect::NoShape: break;
      case SizeEffect::Rejected: why = "the module rejects other values"; break;
      case SizeEffect::Structure: why = "it changes the number or rank of tensors"; break;
      case SizeEffect::OutputsOnly: why = "it changes only output shapes, like a stride or a pooling window"; break;
      case SizeEffect::Mixed: why = "it grows some shape entries and shrinks others, like the index of an axis"; break;
    }
    if (why) p.notes.push_back(fmt::format("'{}' kept at {}: {}", g, v, why));
  }
  tie_equal_sizes(c, p, rejected);
  if (p.sizes.empty())
    return fail("{}: no size to vary: kevo varies shapes through top-level sizes (like 'batch_size = 16', "
                "'N = 2048 * 2' or 'depth, height, width = 16, 32, 32') used by get_inputs()/"
                "get_init_inputs(); found none that changes an input shape",
                c.where);
  return {};
}

// Tied sizes become dims of their own, equal to their lead in every config, so that whoever loads
// the reference with the task's size dims (the oracle, PyTorch timing) sets them all.
void add_tied_sizes(ProblemShape& p) {
  for (const auto& [lead, followers] : p.tied) {
    auto at = std::find(p.sizes.begin(), p.sizes.end(), lead);
    p.sizes.insert(at + 1, followers.begin(), followers.end());
    for (const auto& f : followers) {
      p.base_dims[f] = p.base_dims.at(lead);
      for (auto& cf : p.configs) cf.dims[f] = cf.dims.at(lead);
    }
  }
}

// 2. Every shape entry linear in the sizes where the probes and all configs agree; else derived.
void fit_shapes(ProblemShape& p) {
  p.axes.assign(p.base_slots.size(), {});
  p.dims = p.sizes;
  std::map<std::vector<int64_t>, std::string> derived_by_values;  // equal entries share a dim
  for (size_t i = 0; i < p.base_slots.size(); ++i)
    for (size_t k = 0; k < p.base_slots[i].shape.size(); ++k) {
      AxisSamples s;
      s.base = p.base_slots[i].shape[k];
      for (const auto& [g, dp] : p.probes) s.probes[g] = {dp.first, dp.second.slots[i].shape[k]};
      std::vector<std::pair<const Dims*, int64_t>> checks;
      for (const auto& cf : p.configs) checks.emplace_back(&cf.dims, cf.probe.slots[i].shape[k]);
      auto a = fit_axis(s, p.base_dims, checks, 1);
      if (a) {
        p.axes[i].push_back(*a);
        continue;
      }
      std::vector<int64_t> vals;
      for (const auto& cf : p.configs) vals.push_back(cf.probe.slots[i].shape[k]);
      std::string name = p.base_slots[i].name + "_d" + std::to_string(k);
      auto [it, fresh] = derived_by_values.emplace(vals, name);
      if (fresh) {
        p.dims.push_back(name);
        for (size_t ci = 0; ci < p.configs.size(); ++ci) p.configs[ci].dims[name] = vals[ci];
        p.notes.push_back(fmt::format("'{}' (axis {} of '{}') is not linear in the sizes: derived dim '{}'",
                                      p.base_slots[i].name, k, p.base_slots[i].name, name));
      }
      Axis d;
      d.derived = it->second;
      p.axes[i].push_back(d);
    }
}

double input_bytes(const std::vector<Slot>& slots) {
  double total = 0;
  for (const auto& s : slots) {
    if (s.key.rfind("out:", 0) == 0) continue;
    double n = 4;  // an upper bound per element: kevo's widest dtypes besides i64 are 4 bytes
    for (int64_t e : s.shape) n *= static_cast<double>(e);
    total += n;
  }
  return total;
}

// 3. Statistics of inputs and weights (for the init tables): at main when its tensors are small,
// else at the visible config with the fewest bytes; a real load of that config.
void sample_stats(const Ctx& c, ProblemShape& p) {
  std::vector<const FoundConfig*> order;
  for (const auto& cf : p.configs)
    if (!cf.held_out) order.push_back(&cf);
  std::stable_sort(order.begin(), order.end(), [](const FoundConfig* a, const FoundConfig* b) {
    return input_bytes(a->probe.slots) < input_bytes(b->probe.slots);
  });
  if (input_bytes(p.configs.front().probe.slots) <= kStatsBytesLimit) order.insert(order.begin(), &p.configs.front());
  for (const FoundConfig* cf : order) {
    if (input_bytes(cf->probe.slots) > kStatsBytesCeiling) break;
    Dims sizes;
    for (const auto& g : p.sizes) sizes[g] = cf->dims.at(g);
    if (!c.b.load(c.file, overrides_for(sizes, p.tied), c.seed, false)) continue;
    auto d = c.b.describe(true);
    if (!d || !same_structure(slots_of(*d), p.base_slots)) continue;
    for (size_t i = 0; i < p.base.args.size() && i < d->args.size(); ++i) p.base.args[i].tensor.stats = d->args[i].tensor.stats;
    for (size_t i = 0; i < p.base.weights.size(); ++i) p.base.weights[i].stats = d->weights[i].stats;
    p.stats_config = cf->name;
    p.stats_dims = cf->dims;
    if (cf->name != "main")
      p.notes.push_back(fmt::format("value statistics sampled at config '{}' (main's inputs and weights are "
                                    "{:.1f} GB)", cf->name, input_bytes(p.base_slots) / 1e9));
    return;
  }
  p.stats_dims = p.base_dims;
  p.notes.push_back("no config small enough to materialize for value statistics: floating-point tensors "
                    "drawn from uniform(0, 1)");
}

// The given configs the module accepts, as visible configs; the others are noted.
std::vector<FoundConfig> probe_given(const Ctx& c, ProblemShape& p, const std::vector<GivenConfig>& given) {
  std::vector<FoundConfig> out;
  std::set<Dims> seen{p.base_dims};
  for (const auto& g : given) {
    Dims d = p.base_dims;
    std::string why;
    for (const auto& [k, v] : g.sizes) {
      if (d.count(k)) {
        d[k] = v;
        continue;
      }
      for (const auto& [name, base] : p.base.globals)
        if (name == k && base != v && why.empty()) why = fmt::format("it sets '{}' = {}, which kevo keeps at {}", k, v, base);
    }
    if (why.empty() && !seen.insert(d).second) continue;  // the same sizes as main or an earlier one
    if (why.empty()) {
      auto probe = probe_at(c, d, p.tied);
      if (probe && !same_structure(probe->slots, p.base_slots)) why = "it changes the number or rank of tensors";
      if (!probe) why = "the module rejects it: " + probe.error().message.substr(0, probe.error().message.find('\n'));
      if (probe && why.empty()) {
        out.push_back({g.name, d, false, std::move(*probe)});
        continue;
      }
    }
    p.notes.push_back(fmt::format("config '{}' dropped: {}", g.name, why));
  }
  return out;
}

// Tensors of the module its outputs never read (a training-mode BatchNorm's running statistics)
// are no inputs of the task: one note names them, grouped by what they are.
void note_unread_state(torch::TorchBridge& b, std::vector<std::string>& notes) {
  auto r = b.request({{"op", "unread"}});
  if (!r || !r->contains("unread") || (*r)["unread"].empty()) return;
  std::map<std::string, std::vector<std::string>> by_kind;
  for (const auto& u : (*r)["unread"]) by_kind[u.value("kind", "tensor")].push_back(u.value("path", "?"));
  std::vector<std::string> parts;
  for (const auto& [kind, paths] : by_kind) {
    constexpr size_t kShown = 6;
    std::vector<std::string> shown(paths.begin(), paths.begin() + static_cast<long>(std::min(paths.size(), kShown)));
    std::string more = paths.size() > kShown ? fmt::format(" and {} more", paths.size() - kShown) : "";
    parts.push_back(fmt::format("{} {}: {}{}", paths.size(), paths.size() == 1 ? kind : kind + "s",
                                fmt::join(shown, ", "), more));
  }
  notes.push_back(fmt::format("not inputs, the forward's outputs never read them (the module keeps its own): {}",
                              fmt::join(parts, "; ")));
}

}  // namespace

Error relabel(const Error& e, const fs::path& file, const std::string& label) {
  std::string m = e.message, from = fs::absolute(file).string();
  for (size_t p = 0; (p = m.find(from, p)) != std::string::npos; p += label.size()) m.replace(p, from.size(), label);
  if (m.rfind(label + ":", 0) == 0) return Error{m, e.code};
  return Error{label + ": " + m, e.code};
}

Result<ProblemShape> analyze_problem(torch::TorchBridge& b, const fs::path& file, const std::string& where, uint64_t seed,
                                     const std::vector<GivenConfig>& given) {
  Ctx c{b, file, where, seed};
  ProblemShape p;
  if (auto s = b.load(file, {}, seed, true); !s) return Unexpected{relabel(s.error(), file, where)};
  auto base = b.describe(false);
  if (!base) return Unexpected{relabel(base.error(), file, where)};
  p.base = *base;
  p.base_slots = slots_of(p.base);
  if (p.base.outputs.empty()) return fail("{}: forward returns no tensor", where);
  note_unread_state(b, p.notes);
  ConfigProbe main{p.base_slots, std::nullopt};
  if (auto r = b.request({{"op", "count_flops"}}); r) main.flops = *r;
  KEVO_TRY(find_sizes(c, p));
  FoundConfig main_cfg{"main", p.base_dims, false, main};
  auto named = probe_given(c, p, given);
  p.configs = search_configs(p.sizes, main_cfg, [&](const Dims& d) { return probe_at(c, d, p.tied); }, p.notes);
  std::erase_if(p.configs, [&](const FoundConfig& f) {
    return std::any_of(named.begin(), named.end(), [&](const FoundConfig& n) { return n.dims == f.dims; });
  });
  p.configs.insert(p.configs.begin() + 1, named.begin(), named.end());
  int visible = 0, held = 0;
  for (const auto& cf : p.configs) (cf.held_out ? held : visible)++;
  if (visible < 3 || held < 1) {
    std::string why;
    for (const auto& n : p.notes) why += "\n  " + n;
    return fail("{}: could not derive 3 visible and 1 held-out configuration (got {} and {}){}", where, visible,
                held, why);
  }
  add_tied_sizes(p);
  fit_shapes(p);
  bool unaligned = false;
  for (const auto& cf : p.configs)
    for (const auto& [d, v] : cf.dims) unaligned |= v % 32 != 0;
  if (!unaligned) return fail("{}: every derived configuration has sizes that are multiples of 32", where);
  derive_task_flops(p, main, [&](const Dims& d) { return probe_at(c, d, p.tied); });
  sample_stats(c, p);
  return p;
}

}  // namespace kevo::interop
