#include "evolve/prompts.h"

#include <fmt/format.h>

namespace kevo::evolve {

namespace {

// ---- templates -------------------------------------------------------------------------------

constexpr const char* kSystem =
    "You are an expert CUDA performance engineer. You write correct, fast CUDA kernels for NVIDIA "
    "GPUs. Every kernel you write is compiled and checked for correctness on unseen inputs and "
    "shapes, then timed against a baseline; kernels that cheat (skip work, cache results, use "
    "other streams, lower the precision) are detected and rejected.";

constexpr const char* kAnswerFull =
    "Answer with:\n"
    "NAME: a short name for the kernel\n"
    "THOUGHT: one paragraph on the optimization idea and why it should be faster\n"
    "then the complete .cu file in one ```cuda block.";

constexpr const char* kAnswerFullNoThought =
    "Answer with the complete .cu file in one ```cuda block.";

constexpr const char* kAnswerEdits =
    "Answer with:\n"
    "NAME: a short name for the change\n"
    "THOUGHT: one paragraph on the optimization idea and why it should be faster\n"
    "then one or more edit blocks against the current kernel, each exactly:\n"
    "<<<<<<< SEARCH\n(lines copied exactly from the current kernel)\n=======\n(new lines)\n"
    ">>>>>>> REPLACE\n"
    "Each SEARCH must match exactly one place. Keep the edits small and focused.";

std::string section(const std::string& title, const std::string& body) {
  return fmt::format("## {}\n{}\n\n", title, body);
}

std::string code_block(const std::string& code) { return "```cuda\n" + code + (code.ends_with('\n') ? "" : "\n") + "```"; }

// I1. Without I1 a model still needs the contract to write a valid kernel.
std::string task_part(const StrategyConfig& s, const TaskContext& c, bool show_baseline) {
  std::string out;
  out += section("Task: " + c.task_name, c.description);
  out += section("Interface", c.signature);
  out += section("Candidate ABI (rules every kernel must follow)", c.abi_text);
  if (!s.info.task) return out;
  std::string env;
  if (!c.gpu.empty()) env += fmt::format("GPU: {}\n", c.gpu);
  if (!c.arch.empty()) env += fmt::format("architecture: {}\n", c.arch);
  if (!c.cuda_version.empty()) env += fmt::format("toolkit: {}\n", c.cuda_version);
  if (!env.empty()) out += section("Hardware and toolkit", env);
  std::string shapes;
  for (const auto& l : c.shapes) shapes += "- " + l + "\n";
  shapes += "The kernel must also be correct on other shapes of the same form.";
  out += section("Shapes it is checked on", shapes);
  if (show_baseline && !c.baseline_code.empty()) {
    std::string b = code_block(c.baseline_code);
    if (c.baseline_ms > 0) b += fmt::format("\nIt takes {:.4g} ms on the timed shape.", c.baseline_ms);
    if (s.profile_feedback && !c.baseline_diagnosis.empty()) b += "\nProfile: " + c.baseline_diagnosis;
    out += section("Baseline implementation (correct, to be beaten)", b);
  }
  if (c.sol_floor_ms > 0)
    out += section("Speed of light",
                   fmt::format("No kernel can take less than about {:.4g} ms on the timed shape "
                               "({}-bound floor from the device's measured peaks).",
                               c.sol_floor_ms, c.sol_bound.empty() ? "memory" : c.sol_bound));
  return out;
}

std::string solution_part(const StrategyConfig& s, const SolutionView& v, const std::string& title) {
  std::string body;
  if (s.info.solutions && v.speedup > 0)
    body += fmt::format("speedup over the baseline: {:.3f}x ({:.4g} ms)\n", v.speedup, v.time_ms);
  if (s.profile_feedback && !v.diagnosis.empty()) body += "profile: " + v.diagnosis + "\n";
  if (s.info.insights && !v.rationale.empty()) body += "idea: " + v.rationale + "\n";
  body += code_block(v.source);
  return section(title, body);
}

std::string insight_part(const std::vector<InsightView>& ins) {
  std::string body;
  for (const auto& i : ins) {
    std::string result = i.outcome == store::CandidateOutcome::kPass ? fmt::format("{:.3f}x", i.speedup)
                                                                    : to_string(i.outcome);
    body += fmt::format("- {}{}: {} -> {}\n", i.name.empty() ? "candidate" : i.name,
                        fmt::format(" (#{})", i.id), i.rationale.empty() ? "(no rationale)" : i.rationale, result);
  }
  return section("Insights from earlier attempts (idea -> result)", body);
}

// A kernel longer than this is shown as its diff against its parent instead.
constexpr size_t kArchiveSourceChars = 6000;

std::string archive_part(const std::vector<ArchiveExampleView>& examples) {
  std::string body =
      "Kernels from other runs (kevo's archive) for similar tasks, each verified by the same checker. "
      "They are examples of what worked elsewhere, measured on the GPU named; adapt the ideas, do not "
      "copy blindly.\n\n";
  for (size_t i = 0; i < examples.size(); ++i) {
    const auto& e = examples[i];
    body += fmt::format("### Example {}: {} ({}; {}{})\n", i + 1, e.task, e.op_kind.empty() ? "op kind not known" : e.op_kind,
                        e.dtypes, e.bound.empty() ? "" : ", " + e.bound + "-bound");
    body += fmt::format("from: archive entry {}, {} ({})\n", e.id, e.origin,
                        e.kind == "winner" ? "a run's winner, verified on held-out shapes" : "a new best during a search");
    body += fmt::format("measured on: {}, config {}: {:.3f}x over that task's baseline", e.gpu, e.config, e.speedup);
    if (e.sol_before > 0 && e.sol_after > 0)
      body += fmt::format(", speed of light {:.0f}% -> {:.0f}%", e.sol_before * 100, e.sol_after * 100);
    body += "\n";
    if (!e.rationale.empty()) body += "idea: " + e.rationale + "\n";
    if (e.source.size() <= kArchiveSourceChars) body += code_block(e.source) + "\n";
    else body += "change against its parent:\n```diff\n" + e.diff.substr(0, kArchiveSourceChars) + "```\n";
  }
  return section("Examples from the archive", body);
}

std::string answer_format(const StrategyConfig& s, Op op) {
  if (op == Op::kDiffEdit) return kAnswerEdits;
  if (s.style == "funsearch") return kAnswerFullNoThought;
  return kAnswerFull;
}

}  // namespace

std::string task_context_text(const TaskContext& ctx) { return task_part(StrategyConfig{}, ctx, true); }

Prompt build_prompt(const StrategyConfig& s, const PromptInput& in) {
  Prompt p;
  p.system = kSystem;
  const TaskContext& c = *in.ctx;
  std::string u;
  bool has_parent = !in.parents.empty();
  // The baseline is the starting point until there is a solution to work from.
  bool show_baseline = in.op == Op::kInit || in.op == Op::kRewrite || (!has_parent && in.op != Op::kRepair);
  u += task_part(s, c, show_baseline);
  if (s.info.insights && !in.insights.empty() && in.op != Op::kRepair) u += insight_part(in.insights);
  if (s.info.archive && !in.archive.empty() && in.op != Op::kRepair) u += archive_part(in.archive);

  switch (in.op) {
    case Op::kInit:
      u += section("Your job", "Write a CUDA kernel for this task that is correct on every shape and "
                               "faster than the baseline.");
      break;
    case Op::kRewrite:
      if (s.info.solutions)
        for (size_t i = 0; i < in.parents.size(); ++i)
          u += solution_part(s, in.parents[i], fmt::format("Earlier solution {}", i + 1));
      u += section("Your job",
                   s.style == "eoh"
                       ? "Write a new kernel whose optimization idea is different from the ones above, "
                         "correct on every shape and as fast as possible."
                       : "Write a kernel for this task that is correct on every shape and faster than "
                         "the baseline" + std::string(s.info.insights ? "; learn from the insights above." : "."));
      break;
    case Op::kMutate:
      if (s.style == "funsearch") {
        // FunSearch: earlier versions from worst to best, then ask for the next version.
        for (size_t i = in.parents.size(); i-- > 0;)
          u += solution_part(s, in.parents[i], fmt::format("Version v{}", in.parents.size() - 1 - i));
        u += section("Your job", fmt::format("Write version v{}: an improved kernel, faster than every "
                                             "version above and still correct.", in.parents.size()));
      } else {
        u += solution_part(s, in.parents.at(0), "Current kernel");
        for (size_t i = 1; i < in.parents.size(); ++i)
          u += solution_part(s, in.parents[i], fmt::format("Another solution {}", i));
        u += section("Your job", "Improve the current kernel: make it faster on the timed shape while "
                                 "keeping it correct on every shape.");
      }
      break;
    case Op::kCrossover:
      for (size_t i = 0; i < in.parents.size(); ++i)
        u += solution_part(s, in.parents[i], fmt::format("Parent {}", i + 1));
      u += section("Your job", "Combine the best ideas of these kernels into one kernel that is faster "
                               "than each of them and correct on every shape.");
      break;
    case Op::kDiffEdit:
      u += solution_part(s, in.parents.at(0), "Current kernel");
      u += section("Your job", "Make the current kernel faster with targeted edits, keeping it correct "
                               "on every shape.");
      break;
    case Op::kRepair:
      u += section("Kernel that failed", code_block(in.failed_source));
      u += section("What went wrong", in.feedback);
      u += section("Your job", "Fix this kernel so that it compiles and is correct on every shape; keep "
                               "its optimization idea if you can.");
      break;
    case Op::kTune:
    case Op::kAgent:  // an episode's prompt is the operator's it was planned with
      break;
  }
  u += answer_format(s, in.op);
  p.user = std::move(u);
  return p;
}

// What the verifier checks: the failure classes the checker finds on a GPU, so that its answer
// can be compared with the checker's verdict.
constexpr const char* kVerifierChecklist =
    "1. Compile: the file is valid CUDA C++ that nvcc compiles, with one exported kevo_forward as the ABI "
    "requires.\n"
    "2. Numerics: it computes what the task describes on every shape of the given form (bounds, tails, "
    "reductions, accumulation precision) within the task's tolerance.\n"
    "3. Memory: no out-of-bounds access, no race (missing __syncthreads), no uninitialized reads, no "
    "assumption about sizes or alignment the interface does not promise.\n"
    "4. Hacks: it does all the work on every call (no caching of results, no skipped work), on the given "
    "stream only, in the task's precision, with no threads, files or forbidden libraries.";

Prompt build_verifier_prompt(const TaskContext& c, const std::string& source) {
  Prompt p;
  p.system = "You are a meticulous CUDA code reviewer. You judge whether a kernel is correct and honest "
             "before it is compiled and run.";
  std::string u;
  u += section("Task: " + c.task_name, c.description);
  u += section("Interface", c.signature);
  u += section("Candidate ABI (rules every kernel must follow)", c.abi_text);
  u += section("Kernel to review", code_block(source));
  u += section("Checklist", kVerifierChecklist);
  u += "Answer with exactly two lines:\nVERDICT: PASS (every item holds) or VERDICT: FAIL\n"
       "REASONS: the items that fail and why, briefly (or \"none\").";
  p.user = std::move(u);
  return p;
}

Prompt build_translate_prompt(const TranslatePromptInput& in) {
  Prompt p;
  p.system = kSystem;
  const TaskContext& c = *in.ctx;
  std::string u;
  u += section("Task: " + c.task_name, c.description);
  u += section("Interface", c.signature);
  u += section("Candidate ABI (rules every kernel must follow)", c.abi_text);
  std::string env;
  if (!c.gpu.empty()) env += fmt::format("GPU: {}\n", c.gpu);
  if (!c.arch.empty()) env += fmt::format("architecture: {}\n", c.arch);
  if (!c.cuda_version.empty()) env += fmt::format("toolkit: {}\n", c.cuda_version);
  if (!env.empty()) u += section("Hardware and toolkit", env);
  std::string shapes;
  for (const auto& l : c.shapes) shapes += "- " + l + "\n";
  shapes += "The kernel must also be correct on other shapes of the same form.";
  u += section("Shapes it is checked on", shapes);
  std::string ref = "```python\n" + in.torch_source + (in.torch_source.ends_with('\n') ? "" : "\n") + "```\n" +
                    "Its forward() arguments are the kernel's inputs in the order of the interface above; "
                    "its parameters and buffers (if any) follow as weight inputs, also in that order.";
  u += section("PyTorch reference (" + (in.torch_file.empty() ? std::string("reference.py") : in.torch_file) +
                   "): the kernel must compute exactly this",
               ref);
  if (in.round > 1) {
    if (!in.failed_source.empty()) u += section("Your previous kernel (it failed)", code_block(in.failed_source));
    u += section("What went wrong", in.feedback);
    u += section("Your job", fmt::format("Fix the kernel so that it compiles and matches the PyTorch reference "
                                         "on every shape (attempt {} of {}).", in.round, in.rounds));
  } else {
    u += section("Your job",
                 "Translate the PyTorch reference into one CUDA kernel file in the kevo ABI. Correctness "
                 "comes first: it becomes the baseline that later, faster kernels are checked and timed "
                 "against, so keep it plain and obviously correct on every shape, in the task's precision.");
  }
  u += kAnswerFull;
  p.user = std::move(u);
  return p;
}

}  // namespace kevo::evolve
