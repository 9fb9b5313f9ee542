#include "interop/import_robust_kbench.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "interop/import_backward.h"
#include "interop/import_probe.h"
#include "interop/import_staging.h"
#include "interop/import_toml.h"
#include "interop/robust_kbench.h"
#include "task/backward.h"
#include "task/dtype.h"
#include "util/fs.h"

namespace kevo::interop {
namespace fs = std::filesystem;

namespace {

// The smallest atol any imported gradient gets: kevo's f32 default (docs/TASK_FORMAT.md).
constexpr double kDefaultAtol = 1e-4;

// What one task of a folder is made of.
struct RkbPart {
  std::string name, label, kind, reference;
  const RkbConfigs* configs;
  std::vector<std::pair<std::string, std::string>> extra_files;  // file name -> text, copied as is
};

// Integer settings are sizes (kevo may vary them); others (an init method, eps) stay at main's value
// in every config: kevo draws each tensor from one distribution whatever the config.
std::vector<GivenConfig> given_configs(const RkbConfigs& c, std::vector<std::string>& notes) {
  std::vector<GivenConfig> out;
  std::set<std::string> noted;
  for (size_t i = 0; i < c.multi.size(); ++i) {
    GivenConfig g{fmt::format("multi_{}", i + 1), {}};
    for (const auto& [k, v] : c.multi[i]) {
      if (v.is_number_integer()) {
        g.sizes[k] = v.get<int64_t>();
        continue;
      }
      const torch::ojson* m = rkb_setting(c.main, k);
      if ((!m || *m != v) && noted.insert(k + "=" + v.dump()).second)
        notes.push_back(fmt::format("{}: {} = {} is not a kevo config of its own: every config draws the "
                                    "tensors of the main setting ({})",
                                    g.name, k, v.dump(), m ? m->dump() : "the module's default"));
    }
    out.push_back(std::move(g));
  }
  return out;
}

using Adjust = std::function<Status(ProblemShape&, TaskHeader&)>;

// Writes the part's files, analyses its reference, lets `adjust` change the result, writes the task.
Result<ImportedTask> write_part(torch::TorchBridge& b, const RkbPart& part, const ImportOptions& o, const Adjust& adjust,
                                ProblemShape* shape) {
  auto staging = make_staging(o.out_dir, part.name, o.overwrite);
  if (!staging) return staging.unexpected();
  StagingGuard guard(*staging);
  KEVO_TRY(write_file_atomic(*staging / "reference.py", part.reference));
  for (const auto& [f, text] : part.extra_files) KEVO_TRY(write_file_atomic(*staging / f, text));
  std::vector<std::string> notes;
  auto given = given_configs(*part.configs, notes);
  auto p = analyze_problem(b, *staging / "reference.py", part.label, o.seed, given);
  if (!p) return p.unexpected();
  p->notes.insert(p->notes.begin(), notes.begin(), notes.end());
  TaskHeader h{part.name, o.category.empty() ? guess_category(part.name, part.reference) : o.category,
               part.kind, part.label, part.reference, "", o.flops};
  if (adjust) KEVO_TRY(adjust(*p, h));
  TaskText t = write_task_text(*p, h);
  t.sidecar["robust_kbench"] = {{"folder", part.label}, {"files", torch::ojson::array()}};
  for (const auto& [f, text] : part.extra_files) t.sidecar["robust_kbench"]["files"].push_back(f);
  KEVO_TRY(write_task_files(*staging, t.toml, t.sidecar));
  KEVO_TRY(publish(*staging, o.out_dir / part.name));
  guard.release();
  ImportedTask done{part.name, o.out_dir / part.name, p->notes, std::nullopt};
  if (shape) *shape = std::move(*p);
  return done;
}

int64_t numel(const Slot& s) {
  int64_t n = 1;
  for (int64_t e : s.shape) n *= e;
  return n;
}

std::string numel_text(const ProblemShape& p, size_t slot) {
  std::string s;
  for (const auto& a : p.axes[slot]) s += (s.empty() ? "" : "*") + paren(axis_expr(a, p.sizes));
  return s.empty() ? "1" : s;
}

// How many terms a gradient element may sum, as kevo cannot read the reduction off the module's
// code: the element count of the largest tensor the forward sees (its inputs, weights and outputs,
// i.e. every input of the backward task). An upper bound: the tolerance it sets may be looser than
// the op needs, never tighter.
std::string sums_over_bound(const ProblemShape& p) {
  std::string e;
  std::set<std::string> seen{"1"};
  for (size_t i = 0; i < p.base_slots.size(); ++i) {
    if (p.base_slots[i].key.rfind("out:", 0) == 0) continue;
    std::string n = numel_text(p, i);
    if (!seen.insert(n).second) continue;
    e = e.empty() ? n : fmt::format("max({}, {})", e, n);
  }
  return e.empty() ? "1" : e;
}

// The atol that bound needs on the largest config.
double bound_atol(const ProblemShape& p) {
  double terms = 1;
  for (const auto& cf : p.configs)
    for (const auto& s : cf.probe.slots)
      if (s.key.rfind("out:", 0) != 0) terms = std::max(terms, static_cast<double>(numel(s)));
  return gradient_atol(terms);
}

// The backward's outputs are the gradients of the floating-point tensor arguments, then of the
// parameters: named grad_<tensor>, with the [backward] table and a tolerance for the bound above.
Status adjust_backward(ProblemShape& p, TaskHeader& h, const ProblemShape& fwd, const std::string& fwd_name,
                       const std::vector<std::string>& unsaved) {
  std::vector<std::string> of;
  for (const auto& a : fwd.base.args)
    if (!a.scalar && is_float(a.tensor.dtype)) of.push_back(a.name);
  for (const auto& w : fwd.base.weights)
    if (w.kind == "parameter") of.push_back(w.name);
  if (p.base.outputs.size() != of.size())
    return fail("{}: the backward module returns {} gradients, expected {} ({})", h.source_label,
                p.base.outputs.size(), of.size(), fmt::join(of, ", "));
  for (size_t i = 0; i < of.size(); ++i) {
    p.base.outputs[i].name = "grad_" + of[i];
    for (auto& s : p.base_slots)
      if (s.key == "out:" + (of.size() == 1 ? std::string("out") : fmt::format("out{}", i))) s.name = "grad_" + of[i];
  }
  adopt_forward(p, fwd);
  std::vector<std::string> saved, grads;
  for (const auto& a : fwd.base.args)
    if (!a.scalar) saved.push_back(toml_string(a.name));
  for (const auto& w : fwd.base.weights)
    if (std::find(unsaved.begin(), unsaved.end(), w.name) == unsaved.end()) saved.push_back(toml_string(w.name));
  for (const auto& o : fwd.base.outputs) grads.push_back(fmt::format("grad_{} = {}", o.name, toml_string(o.name)));
  std::string bound = toml_string(sums_over_bound(p)), table;
  for (const auto& t : of)
    table += fmt::format("  {{ output = \"grad_{}\", of = \"{}\", sums_over = {} }},\n", t, t, bound);
  double atol = bound_atol(p);
  h.extra_toml = fmt::format(
      "# sums_over: an upper bound (the forward's largest tensor), as kevo cannot read the reduction\n"
      "# length off the module; the tolerance covers it on every config. Tighten both by hand.\n"
      "[backward]\nof = {}\nsaved = [{}]\ngrad_outputs = {{ {} }}\ngradients = [\n{}]\n\n"
      "[tolerance]\nf32 = {{ atol = {:.2g}, rtol = 1e-4 }}\n",
      toml_string(fwd_name), fmt::join(saved, ", "), fmt::join(grads, ", "), table, atol);
  if (atol > kDefaultAtol)
    p.notes.push_back(fmt::format("tolerance atol {:.2g} for sums of up to {} terms", atol, sums_over_bound(p)));
  return {};
}

// The backward module's interface: the forward's arguments and outputs, its parameters, and which
// of them robust-kbench's backward does not save (top-level ones named in its autograd Function).
RkbBackwardSignature backward_signature(const ProblemShape& fwd, const std::string& backward_source) {
  RkbBackwardSignature sig;
  for (const auto& a : fwd.base.args) sig.args.push_back(a.name);
  for (const auto& x : fwd.base.outputs) sig.grad_outputs.push_back("grad_" + x.name);
  std::vector<std::string> fn_params;
  auto saved = rkb_saved_names(backward_source, &fn_params);
  auto has = [](const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); };
  for (const auto& w : fwd.base.weights) {
    if (w.kind != "parameter") continue;
    sig.parameters.push_back(w.path);
    if (!saved.empty() && w.path == w.name && has(fn_params, w.name) && !has(saved, w.name)) sig.unsaved.push_back(w.name);
  }
  return sig;
}

}  // namespace

std::vector<Result<ImportedTask>> import_robust_kbench(torch::TorchBridge& b, const fs::path& dir, const ImportOptions& o) {
  std::vector<Result<ImportedTask>> out;
  auto folder = read_robust_kbench(dir);
  if (!folder) {
    out.push_back(folder.unexpected());
    return out;
  }
  std::string name = o.name.empty() ? task_name_from(fs::absolute(dir).lexically_normal().filename().string()) : o.name;
  std::string fwd_ref = rkb_reference_source(folder->forward_source, folder->forward.main,
                                             "robust-kbench " + dir.filename().string() + ", func_forward.py");
  RkbPart fwd{name, (dir / "func_forward.py").string(),
              fmt::format("Imported from the robust-kbench task folder {} (func_forward.py, config_forward.json).",
                          dir.filename().string()),
              fwd_ref, &folder->forward, {}};
  ProblemShape fshape;
  out.push_back(write_part(b, fwd, o, nullptr, &fshape));
  if (!folder->backward_source) return out;
  std::string bname = name + "_backward";
  if (!out.front()) {
    out.push_back(fail("{}: backward task {} not imported: its forward task failed", dir.string(), bname));
    return out;
  }
  RkbBackwardSignature sig = backward_signature(fshape, *folder->backward_source);
  std::string bwd_ref = rkb_backward_source(
      rkb_reference_source(folder->forward_source, folder->backward->main,
                           "robust-kbench " + dir.filename().string() + ", func_forward.py, config_backward.json"),
      sig);
  RkbPart bwd{bname, (dir / "func_backward.py").string(),
              fmt::format("Imported from the robust-kbench task folder {} (func_backward.py, config_backward.json): "
                          "the backward pass of {}, gradients by torch.autograd through the forward's PyTorch code.",
                          dir.filename().string(), name),
              bwd_ref, &*folder->backward, {{"func_backward.py", *folder->backward_source}}};
  out.push_back(write_part(
      b, bwd, o,
      [&](ProblemShape& p, TaskHeader& h) {
        if (!sig.unsaved.empty())
          p.notes.push_back(fmt::format("not saved by func_backward.py, so not an input of the backward task: {}",
                                        fmt::join(sig.unsaved, ", ")));
        return adjust_backward(p, h, fshape, name, sig.unsaved);
      },
      nullptr));
  return out;
}

}  // namespace kevo::interop
