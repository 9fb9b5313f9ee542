#include "evolve/task_context.h"

#include <fmt/format.h>

#include "check/profile_diagnosis.h"
#include "util/fs.h"

namespace kevo::evolve {

namespace {

constexpr const char* kAbiFallback =
    "Write one .cu file that includes <kevo/kernel.h> and defines\n"
    "KEVO_EXPORT int kevo_forward(const kevo_args* a); inputs, outputs, scalars and dims come in\n"
    "task order; launch all work on a->stream, return 0 without synchronizing; write every output\n"
    "element; do not modify inputs; no allocation per call (use a->workspace); no streams, threads,\n"
    "files or forbidden libraries; keep the task's precision; handle every shape.\n";

std::string tensor_line(const TensorSpec& t) {
  std::string shape;
  for (size_t i = 0; i < t.shape.size(); ++i) shape += (i ? ", " : "") + t.shape[i];
  return fmt::format("{}: {} [{}]", t.name, dtype_name(t.dtype), shape);
}

std::string dims_of(const Task& task, const Config& c) {
  std::string s;
  for (size_t i = 0; i < task.dims.size(); ++i) {
    auto it = c.dims.find(task.dims[i]);
    s += fmt::format("{}{}={}", i ? ", " : "", task.dims[i], it == c.dims.end() ? 0 : it->second);
  }
  return s;
}

// What a backward task's kernel is given and must produce, in the model's terms: which inputs are
// the forward's (everything else is recomputed from them), which are incoming gradients, and which
// gradient each output is.
std::string backward_lines(const Task& task) {
  if (!task.backward) return "";
  const BackwardSpec& b = *task.backward;
  std::string s = fmt::format("backward pass of the forward task '{}':\n", b.of);
  std::string saved;
  for (const auto& n : b.saved) saved += (saved.empty() ? "" : ", ") + n;
  s += fmt::format("  saved (the forward's inputs; recompute anything else you need from them): {}\n",
                   saved.empty() ? "none" : saved);
  for (const auto& [in, out] : b.saved_outputs)
    s += fmt::format("  saved output: {} = the forward's output {} (read it; do not recompute it)\n", in, out);
  for (const auto& [in, out] : b.grad_outputs)
    s += fmt::format("  incoming gradient: {} = dloss/d{} (the forward's output {})\n", in, out, out);
  for (const auto& g : b.gradients)
    s += fmt::format("  produce: {} = dloss/d{} (each element sums {} terms)\n", g.output, g.of,
                     g.sums_over);
  return s;
}

}  // namespace

std::string load_abi_text() {
  auto text = read_file(kevo_home() / "docs" / "ABI.md");
  if (!text) return kAbiFallback;
  // The heading line is for people; the rest is what a model needs.
  auto p = text->find("```");
  return p == std::string::npos ? *text : text->substr(p);
}

TaskContext make_task_context(const Task& task, const Verdict& baseline, const std::string& cuda_version,
                              const std::string& abi_text) {
  TaskContext c;
  c.task_name = task.name;
  c.description = task.description;
  std::string sig;
  sig += "dims (kevo_args.dims order): ";
  for (size_t i = 0; i < task.dims.size(); ++i) sig += (i ? ", " : "") + task.dims[i];
  sig += "\ninputs (kevo_args.inputs order):\n";
  for (const auto& t : task.inputs) sig += "  " + tensor_line(t) + "\n";
  sig += "outputs (kevo_args.outputs order, contiguous):\n";
  for (const auto& t : task.outputs) sig += "  " + tensor_line(t) + "\n";
  if (!task.scalars.empty()) {
    sig += "scalars (kevo_args.scalars order, as double):\n";
    for (const auto& s : task.scalars) sig += fmt::format("  {} = {}\n", s.name, s.value);
  }
  sig += backward_lines(task);
  if (task.workspace_expr != "0") sig += fmt::format("workspace bytes: {}\n", task.workspace_expr);
  sig += fmt::format("inputs may be modified: {}\n", task.inplace ? "yes" : "no");
  std::string libs;
  if (task.allow_cublas) libs += "cublas ";
  if (task.allow_cudnn) libs += "cudnn ";
  sig += fmt::format("libraries allowed: {}\n", libs.empty() ? "none" : libs);
  Tolerance tol = task.tolerance_for(task.precision());
  sig += fmt::format("precision: {} (tolerance |out-ref| <= {:g}*max(1, rms(ref)) + {:g}*|ref|)\n",
                     dtype_name(task.precision()), tol.atol, tol.rtol);
  sig += fmt::format("flops per call: {}; minimum bytes moved: {}\n", task.flops_expr, task.bytes_expr);
  c.signature = sig;
  c.abi_text = abi_text;
  for (size_t i = 0; i < task.configs.size(); ++i) {
    const Config& cfg = task.configs[i];
    if (cfg.held_out) continue;
    c.shapes.push_back(fmt::format("{}{}: {}", cfg.name, i == task.main_config ? " (timed)" : "",
                                   dims_of(task, cfg)));
  }
  if (auto src = read_file(task.baseline_path())) c.baseline_code = *src;
  if (baseline.device) c.gpu = baseline.device->name;
  if (baseline.compile) c.arch = baseline.compile->arch_used;
  c.cuda_version = cuda_version;
  if (baseline.timing) {
    c.baseline_ms = baseline.timing->candidate.median;
    c.sol_floor_ms = baseline.timing->floor.floor_ms;
    c.sol_bound = baseline.timing->floor.bound ? baseline.timing->floor.bound : "";
  }
  if (baseline.profile) c.baseline_diagnosis = diagnose_profile(*baseline.profile);
  return c;
}

ProfileAdvice profile_advice(const std::string& verdict_json) {
  auto j = nlohmann::json::parse(verdict_json, nullptr, false);
  if (!j.is_object() || !j.contains("profile")) return {};
  auto p = profile_from_json(j["profile"]);
  if (!p) return {};
  if (p->status != ProfileStatus::kProfiled) return {"", fmt::format("{} ({})", p->note, to_string(p->status))};
  return {diagnose_profile(*p), ""};
}

std::string scrub_held_out(std::string text, const Task& task) {
  for (const auto& c : task.configs) {
    if (!c.held_out || c.name.empty()) continue;
    const std::string mask = "<held-out>";
    for (size_t p = text.find(c.name); p != std::string::npos; p = text.find(c.name, p + mask.size()))
      text.replace(p, c.name.size(), mask);
  }
  return text;
}

const char* held_out_failure_text() {
  return "The kernel is correct on the shapes listed above, but the checker also runs it on other shapes "
         "of the same form, which are not shown, and there it produced wrong results. Make it correct for "
         "every size: sizes that are not multiples of the block size, dimensions of size 1, large sizes "
         "(64-bit indexing), every loop bound and tail.";
}

}  // namespace kevo::evolve
