#include "interop/import.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unistd.h>

#include "util/fs.h"

namespace kevo::interop {
namespace fs = std::filesystem;

namespace {

using Dims = std::map<std::string, int64_t>;

// A tensor slot in a description: arguments, weights and outputs, in order.
struct Slot {
  std::string key;   // "arg:x", "weight:conv_weight", "out:out"
  std::string name;  // kevo name
  std::vector<int64_t> shape;
};

std::vector<Slot> slots_of(const Description& d) {
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

// A shape entry: either linear in the size globals (coef, constant) or a derived dim.
struct Axis {
  std::map<std::string, int64_t> coef;
  int64_t constant = 0;
  std::string derived;  // non-empty: the name of a derived dim
};

std::string linear_expr(const Axis& a, const std::vector<std::string>& order) {
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
  if (s.empty()) return fmt::format("{}", a.constant);
  if (a.constant > 0) s += fmt::format(" + {}", a.constant);
  if (a.constant < 0) s += fmt::format(" - {}", -a.constant);
  return s;
}

int64_t eval_axis(const Axis& a, const Dims& dims) {
  int64_t v = a.constant;
  for (const auto& [g, c] : a.coef) v += c * dims.at(g);
  return v;
}

std::string sanitize_name(const std::string& s) {
  std::string out;
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    out += std::isalnum(u) ? static_cast<char>(std::tolower(u)) : '_';
  }
  return out;
}

// TOML basic multi-line string: backslashes and quotes escaped, control characters as \uXXXX.
std::string toml_multiline(const std::string& s) {
  std::string out = "\"\"\"\n";
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n' || c == '\t') out += c;
    else if (c == '\r') out += "\\r";
    else if (u < 0x20 || u == 0x7f) out += fmt::format("\\u{:04x}", u);
    else out += c;
  }
  out += "\"\"\"";
  return out;
}

std::string toml_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '\\' || c == '"') out += std::string("\\") + c;
    else if (u < 0x20 || u == 0x7f) out += fmt::format("\\u{:04x}", u);
    else out += c;
  }
  return out + "\"";
}

std::string num(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{:.1f}", v);
  return fmt::format("{:.6g}", v);
}

std::string guess_category(const std::string& name, const std::string& source) {
  std::string n = name;
  auto has = [&](const char* w) { return n.find(w) != std::string::npos; };
  if (has("matmul") || has("gemm") || has("matrix_mult") || has("linear") || has("bmm")) return "matmul";
  if (has("conv")) return "conv";
  if (has("softmax")) return "softmax";
  if (has("norm")) return "norm";
  if (has("sum") || has("mean") || has("max") || has("min") || has("reduc") || has("argm")) return "reduction";
  if (has("scan") || has("cumsum") || has("cumprod")) return "scan";
  if (has("loss") || has("entropy")) return "loss";
  if (has("attention")) return "attention";
  for (const char* w : {"relu", "gelu", "sigmoid", "tanh", "swish", "elu", "selu", "softplus",
                        "softsign", "hardtanh", "silu", "mish"})
    if (has(w)) return "elementwise";
  if (source.find("torch.matmul") != std::string::npos || source.find("nn.Linear") != std::string::npos)
    return "matmul";
  if (source.find("nn.Conv") != std::string::npos) return "conv";
  return "pytorch";
}

// The init table for a tensor, chosen from the sample's statistics: values that were never negative
// stay non-negative (uniform over the observed range, no wide draw: they may be probabilities or
// variances); others are normal with the observed mean and spread. Weights never get wide draws.
std::string init_for(const BridgeTensor& t, bool weight, const Dims& main_dims,
                     std::vector<std::string>& notes, bool* wide_false) {
  *wide_false = weight;
  TensorStats s = t.stats.value_or(TensorStats{0, 1, 0, 1});
  if (!is_float(t.dtype)) {
    int64_t lo = static_cast<int64_t>(std::floor(s.min));
    int64_t hi = static_cast<int64_t>(std::floor(s.max)) + 1;
    std::string high = fmt::format("{}", hi);
    for (const auto& [d, v] : main_dims)
      if (v == hi && hi > 1) {
        high = toml_string(d);  // e.g. class indices below num_classes
        break;
      }
    if (t.dtype == DType::U8 && lo < 0) lo = 0;
    return fmt::format("{{ dist = \"int\", low = {}, high = {} }}", lo, high);
  }
  if (s.max == s.min) {  // a constant (ones, zeros): keep its sign, give it some spread
    double c = s.min;
    if (c > 0) {
      *wide_false = true;
      return fmt::format("{{ dist = \"uniform\", low = {}, high = {} }}", num(0.5 * c), num(1.5 * c));
    }
    if (c < 0) return fmt::format("{{ dist = \"uniform\", low = {}, high = {} }}", num(1.5 * c), num(0.5 * c));
    notes.push_back(fmt::format("{} '{}' is all zeros in the sample; drawn from normal(0, 0.1)",
                                weight ? "weight" : "input", t.name));
    return "{ dist = \"normal\", mean = 0.0, std = 0.1 }";
  }
  if (s.min >= 0) {
    *wide_false = true;
    double lo = s.min < 0.05 * s.max ? 0.0 : s.min;
    return fmt::format("{{ dist = \"uniform\", low = {}, high = {} }}", num(lo), num(s.max));
  }
  double std = s.std > 0 ? s.std : (s.max - s.min) / 4;
  double mean = std::fabs(s.mean) < 0.05 * std ? 0.0 : s.mean;  // sampling noise around zero
  return fmt::format("{{ dist = \"normal\", mean = {}, std = {} }}", fmt::format("{:.3g}", mean),
                     fmt::format("{:.3g}", std));
}

struct Candidate {
  std::string name;
  Dims dims;
  bool held_out = false;
};

// Variants of the original sizes. Visible ones first (in priority order), then held-out ones.
std::vector<Candidate> candidates(const std::vector<std::string>& order, const Dims& base) {
  std::vector<Candidate> out;
  std::string largest = order.front();
  for (const auto& g : order)
    if (base.at(g) > base.at(largest)) largest = g;
  auto with = [&](const std::string& name, bool held, auto f) {
    Candidate c{name, base, held};
    for (const auto& g : order) c.dims[g] = f(g, base.at(g));
    out.push_back(c);
  };
  with("ragged", false, [&](const std::string& g, int64_t v) { return g == largest ? v + 7 : v; });
  with("minus_one", false, [&](const std::string&, int64_t v) { return v > 1 ? v - 1 : v; });
  with("small", false, [&](const std::string&, int64_t v) { return v >= 32 ? std::max<int64_t>(2, v / 16) + 1 : v; });
  with("plus_one", false, [&](const std::string&, int64_t v) { return v + 1; });
  with("held", true, [&](const std::string&, int64_t v) { return v >= 32 ? v * 3 / 4 + 3 : v; });
  with("held_unit", true, [&](const std::string& g, int64_t v) { return g == order.front() ? int64_t{1} : v; });
  with("held_plus", true, [&](const std::string& g, int64_t v) { return g == largest ? v + 13 : v; });
  return out;
}

struct Imported {
  std::string toml;
  ojson sidecar;
  std::vector<std::string> notes;
};

// Probes the reference loaded from `file` and builds task.toml. `kind` and `extra_desc` shape the
// description; extra_toml is appended to the top-level keys (torch_baseline).
// Error text from the bridge names the file it loaded; users know it as `label`.
Unexpected relabel(const Error& e, const fs::path& file, const std::string& label) {
  std::string m = e.message, from = fs::absolute(file).string();
  for (size_t p = 0; (p = m.find(from, p)) != std::string::npos; p += label.size())
    m.replace(p, from.size(), label);
  if (m.rfind(label + ":", 0) == 0) return Unexpected{Error{m}};
  return Unexpected{Error{label + ": " + m}};
}

Result<Imported> build_task(TorchBridge& b, const fs::path& file, const std::string& name,
                            const std::string& kind, const std::string& source_label,
                            const std::string& extra_toml, const ImportOptions& o) {
  Imported im;
  const std::string where = source_label;
  if (auto s = b.load(file, {}, o.seed); !s) return relabel(s.error(), file, where);
  auto base = b.describe(true);
  if (!base) return relabel(base.error(), file, where);
  const auto base_slots = slots_of(*base);
  if (base->outputs.empty()) return fail("{}: forward returns no tensor", where);

  // 1. Which sizes change a shape, and how.
  std::vector<std::string> order;  // affecting globals, file order
  Dims base_dims;
  std::map<std::string, std::pair<int64_t, std::vector<Slot>>> probe;  // delta, slots
  for (const auto& [g, v] : base->globals) {
    bool done = false;
    for (int64_t delta : {int64_t{7}, v}) {
      if (!b.load(file, {{g, v + delta}}, o.seed, true)) continue;
      auto d = b.describe(false);
      if (!d) continue;
      auto s = slots_of(*d);
      if (!same_structure(s, base_slots)) {
        im.notes.push_back(fmt::format("'{}' changes the number or rank of tensors: kept at {}", g, v));
        done = true;
        break;
      }
      bool changed = false;
      for (size_t i = 0; i < s.size(); ++i) changed |= s[i].shape != base_slots[i].shape;
      if (changed) {
        order.push_back(g);
        base_dims[g] = v;
        probe[g] = {delta, s};
      }
      done = true;
      break;
    }
    if (!done)
      im.notes.push_back(fmt::format("'{}' cannot be changed (the module rejects other values): kept at {}", g, v));
  }
  if (order.empty())
    return fail("{}: no size to vary: kevo varies shapes through top-level integer assignments "
                "(like 'batch_size = 16') used by get_inputs()/get_init_inputs(); found none that "
                "changes a tensor shape",
                where);

  // 2. Linear fit of every shape entry.
  std::vector<std::vector<Axis>> axes(base_slots.size());
  for (size_t i = 0; i < base_slots.size(); ++i) {
    for (size_t k = 0; k < base_slots[i].shape.size(); ++k) {
      Axis a;
      bool linear = true;
      int64_t s0 = base_slots[i].shape[k];
      for (const auto& g : order) {
        auto& [delta, slots] = probe[g];
        int64_t ds = slots[i].shape[k] - s0;
        if (ds % delta != 0) linear = false;
        else if (ds) a.coef[g] = ds / delta;
      }
      a.constant = s0;
      for (const auto& [g, c] : a.coef) a.constant -= c * base_dims[g];
      if (!linear) a.derived = base_slots[i].name + "_d" + std::to_string(k);
      axes[i].push_back(a);
    }
  }

  // 3. Configs, each validated by the bridge (shapes only).
  struct Cfg {
    Candidate c;
    std::vector<Slot> slots;
  };
  std::vector<Cfg> cfgs{{Candidate{"main", base_dims, false}, base_slots}};
  std::set<Dims> seen{base_dims};
  int visible = 1, held = 0;
  for (const auto& c : candidates(order, base_dims)) {
    if (!c.held_out && visible >= 4) continue;
    if (c.held_out && held >= 2) continue;
    if (!seen.insert(c.dims).second) continue;
    std::map<std::string, int64_t> set;
    for (const auto& g : order) set[g] = c.dims.at(g);
    Status st = b.load(file, set, o.seed, true);
    Result<Description> d = st ? b.describe(false) : Result<Description>(st.unexpected());
    if (!d) {
      std::string msg = d.error().message;
      msg = relabel(d.error(), file, where).error.message;
      im.notes.push_back(fmt::format("config '{}' dropped (the module rejects it): {}", c.name,
                                     msg.substr(0, msg.find('\n'))));
      continue;
    }
    auto s = slots_of(*d);
    if (!same_structure(s, base_slots)) {
      im.notes.push_back(fmt::format("config '{}' dropped: it changes the number or rank of tensors", c.name));
      continue;
    }
    cfgs.push_back({c, s});
    (c.held_out ? held : visible)++;
  }
  if (visible < 3 || held < 1) {
    std::string why;
    for (const auto& n : im.notes) why += "\n  " + n;
    return fail("{}: could not derive 3 visible and 1 held-out configuration (got {} and {}){}",
                where, visible, held, why);
  }

  // 4. Entries the linear fit does not predict at every config become derived dims.
  for (size_t i = 0; i < base_slots.size(); ++i)
    for (size_t k = 0; k < axes[i].size(); ++k) {
      Axis& a = axes[i][k];
      if (!a.derived.empty()) continue;
      for (const auto& cf : cfgs)
        if (eval_axis(a, cf.c.dims) != cf.slots[i].shape[k]) {
          a.derived = base_slots[i].name + "_d" + std::to_string(k);
          break;
        }
    }
  std::vector<std::string> dims = order;
  // Identical derived entries (same values at every config) share one dim.
  std::map<std::vector<int64_t>, std::string> derived_by_values;
  for (size_t i = 0; i < base_slots.size(); ++i)
    for (size_t k = 0; k < axes[i].size(); ++k) {
      Axis& a = axes[i][k];
      if (a.derived.empty()) continue;
      std::vector<int64_t> vals;
      for (const auto& cf : cfgs) vals.push_back(cf.slots[i].shape[k]);
      auto [it, fresh] = derived_by_values.emplace(vals, a.derived);
      if (fresh) {
        dims.push_back(a.derived);
        for (size_t c = 0; c < cfgs.size(); ++c) cfgs[c].c.dims[a.derived] = vals[c];
        im.notes.push_back(fmt::format("'{}' (axis {} of '{}') is not linear in the sizes: derived dim '{}'",
                                       base_slots[i].name, k, base_slots[i].name, a.derived));
      }
      a.derived = it->second;
    }
  bool unaligned = false;
  for (const auto& cf : cfgs)
    for (const auto& [d, v] : cf.c.dims) unaligned |= v % 32 != 0;
  if (!unaligned) return fail("{}: every derived configuration has sizes that are multiples of 32", where);

  auto shape_exprs = [&](size_t slot) {
    std::vector<std::string> out;
    for (const auto& a : axes[slot]) out.push_back(a.derived.empty() ? linear_expr(a, order) : a.derived);
    if (out.empty()) out.push_back("1");  // a 0-dim tensor is passed as one element
    return out;
  };
  auto paren = [](const std::string& e) {
    return e.find_first_of("+-") == std::string::npos ? e : "(" + e + ")";
  };
  auto numel_expr = [&](size_t slot) {
    std::string s;
    for (const auto& e : shape_exprs(slot)) s += (s.empty() ? "" : "*") + paren(e);
    return s;
  };

  // 5. task.toml.
  std::vector<std::string> arg_list, weight_list, out_list;
  std::string bytes, flops_lb;
  size_t slot = 0;
  std::string inputs_toml, outputs_toml, scalars_toml;
  Dims main_dims = cfgs.front().c.dims;
  auto shape_toml = [&](size_t sl) {
    std::string s;
    for (const auto& e : shape_exprs(sl)) s += (s.empty() ? "" : ", ") + toml_string(e);
    return "[" + s + "]";
  };
  auto tensor_toml = [&](const BridgeTensor& t, size_t sl, bool weight) {
    bool wide_false = false;
    std::string init = init_for(t, weight, main_dims, im.notes, &wide_false);
    std::string s = fmt::format("\n[[inputs]]\nname = {}\ndtype = \"{}\"\nshape = {}\nrole = \"{}\"\ninit = {}\n",
                                toml_string(t.name), dtype_name(t.dtype), shape_toml(sl),
                                weight ? "weight" : "input", init);
    if (wide_false && is_float(t.dtype)) s += "wide = false\n";
    if (t.torch_dtype == "bool") s = "\n# a torch.bool tensor, passed as u8 0/1" + s;
    if (weight) s = fmt::format("\n# {} '{}' of the module", t.kind, t.path) + s;
    std::string term = fmt::format("{}*{}", dtype_size(t.dtype), numel_expr(sl));
    bytes += (bytes.empty() ? "" : " + ") + term;
    return s;
  };
  for (const auto& a : base->args) {
    if (a.scalar) {
      scalars_toml += fmt::format("\n[[scalars]]\nname = {}\nvalue = {}\n", toml_string(a.name),
                                  a.is_int ? fmt::format("{}", static_cast<int64_t>(a.value)) : num(a.value));
      arg_list.push_back(fmt::format("{} (scalar {})", a.name, a.is_int ? fmt::format("{}", static_cast<int64_t>(a.value)) : num(a.value)));
      continue;
    }
    inputs_toml += tensor_toml(a.tensor, slot, false);
    arg_list.push_back(fmt::format("{} {} [{}]", a.name, dtype_name(a.tensor.dtype),
                                   fmt::join(shape_exprs(slot), ", ")));
    ++slot;
  }
  for (const auto& w : base->weights) {
    inputs_toml += tensor_toml(w, slot, true);
    weight_list.push_back(fmt::format("{} {} [{}] (the module's {} {})", w.name, dtype_name(w.dtype),
                                      fmt::join(shape_exprs(slot), ", "), w.kind, w.path));
    ++slot;
  }
  if (base->args.empty() || inputs_toml.empty())
    return fail("{}: get_inputs() returns no tensor and the module has no parameters", where);
  for (const auto& out : base->outputs) {
    outputs_toml += fmt::format("\n[[outputs]]\nname = {}\ndtype = \"{}\"\nshape = {}\n",
                                toml_string(out.name), dtype_name(out.dtype), shape_toml(slot));
    bytes += fmt::format(" + {}*{}", dtype_size(out.dtype), numel_expr(slot));
    flops_lb += (flops_lb.empty() ? "" : " + ") + numel_expr(slot);
    out_list.push_back(fmt::format("{} {} [{}]", out.name, dtype_name(out.dtype),
                                   fmt::join(shape_exprs(slot), ", ")));
    ++slot;
  }

  std::string source;
  if (auto txt = read_file(file); txt) source = *txt;
  std::string category = o.category.empty() ? guess_category(name, source) : o.category;
  std::string sizes;
  for (const auto& g : order) sizes += fmt::format("{}{} = {}", sizes.empty() ? "" : ", ", g, base_dims[g]);
  std::string desc = fmt::format(
      "{}\nCompute exactly what this PyTorch reference computes: the output(s) of Model.forward for\n"
      "the given arguments{}, for every size the task declares (not only the sizes in the source).\n\n"
      "kevo_args.inputs, in order: {}{}.\nkevo_args.outputs: {}.\n"
      "Dims (kevo_args.dims, in order): {}. In the source they are the top-level sizes ({}), which\n"
      "kevo varies; other constants in the source are fixed.\n\n```python\n{}```\n",
      kind, weight_list.empty() ? "" : " and the module's parameters/buffers",
      fmt::join(arg_list, "; "), weight_list.empty() ? "" : "; then the weights: " + fmt::format("{}", fmt::join(weight_list, "; ")),
      fmt::join(out_list, "; "), fmt::join(dims, ", "), sizes, source);

  std::string toml;
  toml += fmt::format("# Imported by `kevo import` from {}.\n", source_label);
  toml += "# The oracle is the PyTorch reference (reference.py) run through the bridge; this task has no\n"
          "# CPU reference.cpp, and no baseline.cu until `kevo translate` writes one.\n";
  toml += fmt::format("name = {}\ncategory = {}\ndescription = {}\n", toml_string(name),
                      toml_string(category), toml_multiline(desc));
  std::string dl;
  for (const auto& d : dims) dl += (dl.empty() ? "" : ", ") + toml_string(d);
  toml += fmt::format("dims = [{}]\n", dl);
  if (!o.flops.empty()) {
    toml += fmt::format("flops = {}\n", toml_string(o.flops));
  } else {
    toml += "# flops: NOT DERIVED. A conservative lower bound (one operation per output element); set the\n"
            "# real count (kevo import --flops EXPR) for a meaningful speed-of-light floor.\n";
    toml += fmt::format("flops = {}\n", toml_string(flops_lb));
    im.notes.push_back("flops not derived: lower bound of one operation per output element (use --flops)");
  }
  toml += "# bytes: every input and weight read once and every output written once.\n";
  toml += fmt::format("bytes = {}\n", toml_string(bytes));
  toml += "oracle = \"torch\"\ntorch_reference = \"reference.py\"\n";
  toml += extra_toml;
  toml += inputs_toml + outputs_toml + scalars_toml;
  for (const auto& cf : cfgs) {
    std::string dv;
    for (const auto& d : dims) dv += fmt::format("{}{} = {}", dv.empty() ? "" : ", ", d, cf.c.dims.at(d));
    toml += fmt::format("\n[[configs]]\nname = \"{}\"\ndims = {{ {} }}\n", cf.c.name, dv);
    if (cf.c.name == "main") toml += "main = true\n";
    if (cf.c.held_out) toml += "held_out = true\n";
  }
  im.toml = toml;

  // The sidecar for `kevo export-torch` and the oracle wiring: torch-side names and dtypes.
  ojson sc = {{"format", 1}, {"kind", kind}, {"source", source_label}, {"style", base->style},
              {"size_dims", order}, {"derived_dims", ojson::array()}, {"args", ojson::array()},
              {"weights", ojson::array()}, {"outputs", ojson::array()}};
  for (const auto& d : dims)
    if (std::find(order.begin(), order.end(), d) == order.end()) sc["derived_dims"].push_back(d);
  for (const auto& a : base->args)
    sc["args"].push_back(a.scalar ? ojson{{"name", a.name}, {"scalar", true}}
                                  : ojson{{"name", a.name}, {"torch_dtype", a.tensor.torch_dtype}});
  for (const auto& w : base->weights)
    sc["weights"].push_back({{"name", w.name}, {"path", w.path}, {"kind", w.kind}, {"torch_dtype", w.torch_dtype}});
  for (const auto& out : base->outputs)
    sc["outputs"].push_back({{"name", out.name}, {"torch_dtype", out.torch_dtype}, {"shape", out.shape}});
  im.sidecar = sc;
  return im;
}

Result<fs::path> make_staging(const fs::path& out_dir, const std::string& name, bool overwrite) {
  std::error_code ec;
  fs::path final_dir = out_dir / name;
  if (fs::exists(final_dir, ec) && !overwrite)
    return fail("{}: already exists (use --force to replace it)", final_dir.string());
  fs::create_directories(out_dir, ec);
  if (ec) return fail("{}: cannot create: {}", out_dir.string(), ec.message());
  fs::path staging = out_dir / fmt::format(".{}.importing.{}", name, getpid());
  fs::remove_all(staging, ec);
  fs::create_directories(staging, ec);
  if (ec) return fail("{}: cannot create: {}", staging.string(), ec.message());
  return staging;
}

Status publish(const fs::path& staging, const fs::path& final_dir) {
  std::error_code ec;
  fs::remove_all(final_dir, ec);
  fs::rename(staging, final_dir, ec);
  if (ec) return fail("cannot move {} to {}: {}", staging.string(), final_dir.string(), ec.message());
  return {};
}

Status write_task_files(const fs::path& staging, const Imported& im) {
  KEVO_TRY(write_file_atomic(staging / "task.toml", im.toml));
  KEVO_TRY(write_file_atomic(staging / "torch.json", im.sidecar.dump(2) + "\n"));
  return {};
}

}  // namespace

std::string task_name_from(const std::string& stem) {
  std::string s = sanitize_name(stem);
  std::string out;
  for (char c : s)
    if (!(c == '_' && (out.empty() || out.back() == '_'))) out += c;
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out.empty() ? "imported" : out;
}

Result<ImportedTask> import_kernelbench(TorchBridge& b, const fs::path& file, const ImportOptions& o) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return fail("{}: no such file", file.string());
  auto source = read_file(file);
  if (!source) return source.unexpected();
  if (source->find("get_inputs") == std::string::npos)
    return fail("{}: not a KernelBench problem file: it defines no get_inputs()", file.string());
  std::string name = o.name.empty() ? task_name_from(file.stem().string()) : o.name;
  auto staging = make_staging(o.out_dir, name, o.overwrite);
  if (!staging) return staging.unexpected();
  auto cleanup = [&] {
    std::error_code e;
    fs::remove_all(*staging, e);
  };
  if (auto s = write_file_atomic(*staging / "reference.py", *source); !s) {
    cleanup();
    return s.unexpected();
  }
  auto im = build_task(b, file, name,
                       fmt::format("Imported from the KernelBench problem file {}.", file.filename().string()),
                       file.string(), "", o);
  if (!im) {
    cleanup();
    return fail("{}", im.error().message);
  }
  if (auto s = write_task_files(*staging, *im); !s) {
    cleanup();
    return s.unexpected();
  }
  if (auto s = publish(*staging, o.out_dir / name); !s) {
    cleanup();
    return s.unexpected();
  }
  return ImportedTask{name, o.out_dir / name, im->notes};
}

Result<std::vector<EvoRecord>> parse_evoengineer(const fs::path& file) {
  auto text = read_file(file);
  if (!text) return text.unexpected();
  ojson j;
  try {
    j = ojson::parse(*text);
  } catch (const ojson::parse_error& e) {
    return fail("{}: not valid JSON: {}", file.string(), e.what());
  }
  auto field = [](const ojson& r, std::initializer_list<const char*> keys) -> std::optional<std::string> {
    for (const char* k : keys)
      if (r.contains(k) && r[k].is_string()) return r[k].get<std::string>();
    return std::nullopt;
  };
  std::vector<EvoRecord> out;
  auto one = [&](const std::string& label, std::string name, const ojson& r) -> Status {
    if (!r.is_object()) return fail("{}: record {}: must be a JSON object", file.string(), label);
    if (name.empty()) {
      auto n = field(r, {"name", "task_name", "Op_Name", "op_name"});
      if (!n) return fail("{}: record {}: has no name (name, task_name or Op_Name)", file.string(), label);
      name = *n;
    }
    EvoRecord rec;
    rec.name = name;
    struct K {
      std::string* dst;
      std::initializer_list<const char*> keys;
      const char* what;
    };
    for (const K& k : {K{&rec.original, {"org_py_code", "PyTorch_Code_Module"}, "the original module (org_py_code)"},
                       K{&rec.functional, {"func_py_code", "PyTorch_Code_Functional"}, "the functional module (func_py_code)"},
                       K{&rec.cuda, {"cuda_code", "CUDA_Code"}, "the CUDA extension (cuda_code)"}}) {
      auto v = field(r, k.keys);
      if (!v) return fail("{}: record '{}': missing {} (a string)", file.string(), name, k.what);
      if (v->find_first_not_of(" \n\t\r") == std::string::npos)
        return fail("{}: record '{}': {} is empty", file.string(), name, k.what);
      *k.dst = *v;
    }
    if (rec.functional.find("get_inputs") == std::string::npos)
      return fail("{}: record '{}': the functional module defines no get_inputs()", file.string(), name);
    out.push_back(std::move(rec));
    return {};
  };
  if (j.is_object()) {
    // Either one record, or {name: record}.
    if (j.contains("func_py_code") || j.contains("PyTorch_Code_Functional")) {
      KEVO_TRY(one("0", "", j));
    } else {
      for (const auto& [k, v] : j.items()) KEVO_TRY(one("'" + k + "'", k, v));
    }
  } else if (j.is_array()) {
    size_t i = 0;
    for (const auto& v : j) KEVO_TRY(one(std::to_string(i++), "", v));
  } else {
    return fail("{}: must hold a JSON object or array of records", file.string());
  }
  if (out.empty()) return fail("{}: holds no records", file.string());
  return out;
}

Result<ImportedTask> import_evoengineer_record(TorchBridge& b, const EvoRecord& rec,
                                               const fs::path& source, const ImportOptions& o) {
  std::string name = o.name.empty() ? task_name_from(rec.name) : o.name;
  auto staging = make_staging(o.out_dir, name, o.overwrite);
  if (!staging) return staging.unexpected();
  auto cleanup = [&] {
    std::error_code e;
    fs::remove_all(*staging, e);
  };
  for (const auto& [f, text] : {std::pair<const char*, const std::string*>{"reference.py", &rec.functional},
                                {"original.py", &rec.original},
                                {"torch_baseline.cu", &rec.cuda}})
    if (auto s = write_file_atomic(*staging / f, *text); !s) {
      cleanup();
      return s.unexpected();
    }
  std::string label = fmt::format("{} (record '{}')", source.string(), rec.name);
  auto im = build_task(
      b, *staging / "reference.py", name,
      fmt::format("Imported from the EvoEngineer record '{}' (functional form of the module).", rec.name),
      label,
      "# The record's CUDA kernel, as a PyTorch extension: a baseline timed through the bridge.\n"
      "torch_baseline = \"torch_baseline.cu\"\n",
      o);
  if (!im) {
    cleanup();
    return fail("{}", im.error().message);
  }
  im->sidecar["original"] = "original.py";
  im->sidecar["torch_baseline"] = "torch_baseline.cu";
  if (auto s = write_task_files(*staging, *im); !s) {
    cleanup();
    return s.unexpected();
  }
  if (auto s = publish(*staging, o.out_dir / name); !s) {
    cleanup();
    return s.unexpected();
  }
  return ImportedTask{name, o.out_dir / name, im->notes};
}

}  // namespace kevo::interop
