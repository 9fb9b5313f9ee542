#include "interop/import_toml.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace kevo::interop {
namespace {

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

std::string num(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{:.1f}", v);
  return fmt::format("{:.6g}", v);
}

// The init table for a tensor, chosen from the sample's statistics: values that were never negative
// stay non-negative (uniform over the observed range, no wide draw: they may be probabilities or
// variances); others are normal with the observed mean and spread. Weights never get wide draws.
std::string init_for(const torch::BridgeTensor& t, bool weight, const Dims& sample_dims,
                     std::vector<std::string>& notes, bool* wide_false) {
  *wide_false = weight;
  torch::TensorStats s = t.stats.value_or(torch::TensorStats{0, 1, 0, 1});
  if (!is_float(t.dtype)) {
    int64_t lo = static_cast<int64_t>(std::floor(s.min));
    int64_t hi = static_cast<int64_t>(std::floor(s.max)) + 1;
    std::string high = fmt::format("{}", hi);
    for (const auto& [d, v] : sample_dims)
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


struct Sections {
  std::vector<std::string> arg_list, weight_list, out_list;
  std::string bytes, flops_lb, inputs, outputs, scalars;
};

std::vector<std::string> shape_exprs(const ProblemShape& p, size_t slot) {
  std::vector<std::string> out;
  for (const auto& a : p.axes[slot]) out.push_back(axis_expr(a, p.sizes));
  if (out.empty()) out.push_back("1");  // a 0-dim tensor is passed as one element
  return out;
}

std::string numel_expr(const ProblemShape& p, size_t slot) {
  std::string s;
  for (const auto& e : shape_exprs(p, slot)) s += (s.empty() ? "" : "*") + paren(e);
  return s;
}

std::string shape_toml(const ProblemShape& p, size_t slot) {
  std::string s;
  for (const auto& e : shape_exprs(p, slot)) s += (s.empty() ? "" : ", ") + toml_string(e);
  return "[" + s + "]";
}

std::string scalar_text(const torch::BridgeArg& a) {
  return a.is_int ? fmt::format("{}", static_cast<int64_t>(a.value)) : num(a.value);
}

// [[inputs]] (arguments, then weights), [[outputs]], [[scalars]] and the interface lists.
Sections tensor_sections(ProblemShape& p) {
  Sections s;
  size_t slot = 0;
  auto tensor = [&](const torch::BridgeTensor& t, size_t sl, bool weight) {
    bool wide_false = false;
    std::string init = init_for(t, weight, p.stats_dims, p.notes, &wide_false);
    std::string out = fmt::format("\n[[inputs]]\nname = {}\ndtype = \"{}\"\nshape = {}\nrole = \"{}\"\ninit = {}\n",
                                  toml_string(t.name), dtype_name(t.dtype), shape_toml(p, sl),
                                  weight ? "weight" : "input", init);
    if (wide_false && is_float(t.dtype)) out += "wide = false\n";
    if (t.torch_dtype == "bool") out = "\n# a torch.bool tensor, passed as u8 0/1" + out;
    if (weight) out = fmt::format("\n# {} '{}' of the module", t.kind, t.path) + out;
    s.bytes += fmt::format("{}{}*{}", s.bytes.empty() ? "" : " + ", dtype_size(t.dtype), numel_expr(p, sl));
    return out;
  };
  for (const auto& a : p.base.args) {
    if (a.scalar) {
      s.scalars += fmt::format("\n[[scalars]]\nname = {}\nvalue = {}\n", toml_string(a.name), scalar_text(a));
      s.arg_list.push_back(fmt::format("{} (scalar {})", a.name, scalar_text(a)));
      continue;
    }
    s.inputs += tensor(a.tensor, slot, false);
    s.arg_list.push_back(fmt::format("{} {} [{}]", a.name, dtype_name(a.tensor.dtype), fmt::join(shape_exprs(p, slot), ", ")));
    ++slot;
  }
  for (const auto& w : p.base.weights) {
    s.inputs += tensor(w, slot, true);
    s.weight_list.push_back(fmt::format("{} {} [{}] (the module's {} {})", w.name, dtype_name(w.dtype),
                                        fmt::join(shape_exprs(p, slot), ", "), w.kind, w.path));
    ++slot;
  }
  for (const auto& out : p.base.outputs) {
    s.outputs += fmt::format("\n[[outputs]]\nname = {}\ndtype = \"{}\"\nshape = {}\n", toml_string(out.name),
                             dtype_name(out.dtype), shape_toml(p, slot));
    s.bytes += fmt::format(" + {}*{}", dtype_size(out.dtype), numel_expr(p, slot));
    s.flops_lb += (s.flops_lb.empty() ? "" : " + ") + numel_expr(p, slot);
    s.out_list.push_back(fmt::format("{} {} [{}]", out.name, dtype_name(out.dtype), fmt::join(shape_exprs(p, slot), ", ")));
    ++slot;
  }
  return s;
}

std::string description(const ProblemShape& p, const Sections& s, const TaskHeader& h) {
  std::string sizes;
  for (const auto& g : p.sizes) sizes += fmt::format("{}{} = {}", sizes.empty() ? "" : ", ", g, p.base_dims.at(g));
  return fmt::format(
      "{}\nCompute exactly what this PyTorch reference computes: the output(s) of Model.forward for\n"
      "the given arguments{}, for every size the task declares (not only the sizes in the source).\n\n"
      "kevo_args.inputs, in order: {}{}.\nkevo_args.outputs: {}.\n"
      "Dims (kevo_args.dims, in order): {}. In the source they are the top-level sizes ({}), which\n"
      "kevo varies; other constants in the source are fixed.\n\n```python\n{}```\n",
      h.kind, s.weight_list.empty() ? "" : " and the module's parameters/buffers", fmt::join(s.arg_list, "; "),
      s.weight_list.empty() ? "" : "; then the weights: " + fmt::format("{}", fmt::join(s.weight_list, "; ")),
      fmt::join(s.out_list, "; "), fmt::join(p.dims, ", "), sizes, h.source);
}

std::string flops_toml(ProblemShape& p, const Sections& s, const TaskHeader& h) {
  if (!h.flops_override.empty()) return fmt::format("flops = {}\n", toml_string(h.flops_override));
  if (p.flops)
    return fmt::format("# flops: derived from the module's operations (matmul/conv multiply-adds count 2) and\n"
                       "# checked against the operation counter at configs {}.\nflops = {}\n",
                       fmt::join(p.flops->checked_at, ", "), toml_string(p.flops->expr));
  p.notes.push_back("flops not derived: lower bound of one operation per output element (use --flops)");
  return "# flops: NOT DERIVED. A conservative lower bound (one operation per output element); set the\n"
         "# real count (kevo import --flops EXPR) for a meaningful speed-of-light floor.\n" +
         fmt::format("flops = {}\n", toml_string(s.flops_lb));
}

torch::ojson sidecar(const ProblemShape& p, const TaskHeader& h) {
  torch::ojson sc = {{"format", 1}, {"kind", h.kind}, {"source", h.source_label}, {"style", p.base.style},
              {"size_dims", p.sizes}, {"derived_dims", torch::ojson::array()}, {"args", torch::ojson::array()},
              {"weights", torch::ojson::array()}, {"outputs", torch::ojson::array()}};
  for (const auto& d : p.dims)
    if (std::find(p.sizes.begin(), p.sizes.end(), d) == p.sizes.end()) sc["derived_dims"].push_back(d);
  for (const auto& a : p.base.args)
    sc["args"].push_back(a.scalar ? torch::ojson{{"name", a.name}, {"scalar", true}}
                                  : torch::ojson{{"name", a.name}, {"torch_dtype", a.tensor.torch_dtype}});
  for (const auto& w : p.base.weights)
    sc["weights"].push_back({{"name", w.name}, {"path", w.path}, {"kind", w.kind}, {"torch_dtype", w.torch_dtype}});
  for (const auto& out : p.base.outputs)
    sc["outputs"].push_back({{"name", out.name}, {"torch_dtype", out.torch_dtype}, {"shape", out.shape}});
  return sc;
}

}  // namespace

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

std::string sanitize_name(const std::string& s) {
  std::string out;
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    out += std::isalnum(u) ? static_cast<char>(std::tolower(u)) : '_';
  }
  return out;
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

TaskText write_task_text(ProblemShape& p, const TaskHeader& h) {
  Sections s = tensor_sections(p);
  std::string toml;
  toml += fmt::format("# Imported by `kevo import` from {}.\n", h.source_label);
  toml += "# The oracle is the PyTorch reference (reference.py) run through the bridge; this task has no\n"
          "# CPU reference.cpp, and no baseline.cu until `kevo translate` writes one.\n";
  toml += fmt::format("name = {}\ncategory = {}\ndescription = {}\n", toml_string(h.name), toml_string(h.category),
                      toml_multiline(description(p, s, h)));
  std::string dl;
  for (const auto& d : p.dims) dl += (dl.empty() ? "" : ", ") + toml_string(d);
  toml += fmt::format("dims = [{}]\n", dl);
  toml += flops_toml(p, s, h);
  toml += "# bytes: every input and weight read once and every output written once.\n";
  toml += fmt::format("bytes = {}\n", toml_string(s.bytes));
  toml += "oracle = \"torch\"\ntorch_reference = \"reference.py\"\n";
  toml += h.extra_toml;
  toml += s.inputs + s.outputs + s.scalars;
  for (const auto& cf : p.configs) {
    std::string dv;
    for (const auto& d : p.dims) dv += fmt::format("{}{} = {}", dv.empty() ? "" : ", ", d, cf.dims.at(d));
    toml += fmt::format("\n[[configs]]\nname = \"{}\"\ndims = {{ {} }}\n", cf.name, dv);
    if (cf.name == "main") toml += "main = true\n";
    if (cf.held_out) toml += "held_out = true\n";
  }
  return {toml, sidecar(p, h)};
}

std::string drop_config_blocks(const std::string& toml, const std::vector<std::string>& names) {
  std::string out = toml;
  for (const auto& n : names) {
    const std::string head = fmt::format("\n[[configs]]\nname = \"{}\"\n", n);
    const size_t at = out.find(head);
    if (at == std::string::npos) continue;
    // The block ends where the next line opens a table ("\n[") or a comment before one ("\n#").
    size_t end = out.size();
    for (const char* next : {"\n[", "\n#"})
      if (size_t e = out.find(next, at + head.size() - 1); e != std::string::npos) end = std::min(end, e);
    out.erase(at, end - at);
  }
  return out;
}

}  // namespace kevo::interop
