// I1, the task context a model sees: what to compute and the contract, the GPU, the CUDA
// version, the visible shapes, the baseline's code and time, and the speed-of-light floor.
// Held-out configurations are never part of it: they exist to catch kernels fitted to the
// shapes the model saw, so neither their names nor their sizes may reach a prompt.
#pragma once

#include <string>
#include <vector>

#include "check/verdict.h"
#include "task/task.h"

namespace kevo::evolve {

struct TaskContext {
  std::string task_name, description;
  std::string signature;  // inputs, outputs, scalars, dims, workspace, precision, tolerance
  std::string abi_text;   // docs/ABI.md (the part meant for prompts)
  std::string gpu, arch, cuda_version;
  std::vector<std::string> shapes;  // one line per visible config
  std::string baseline_code;
  double baseline_ms = 0;    // the baseline's median on the main config (0: unknown)
  double sol_floor_ms = 0;   // speed-of-light floor on the main config (0: unknown)
  std::string sol_bound;     // "memory" or "compute"
  std::string baseline_diagnosis;  // the baseline's profile read by rule (empty: not profiled)
};

// The ABI text from docs/ABI.md (under kevo_home()), or a built-in summary when it is missing.
std::string load_abi_text();

TaskContext make_task_context(const Task& task, const Verdict& baseline, const std::string& cuda_version,
                              const std::string& abi_text);

// What a stored verdict's profile (Verdict::profile) says, for the next prompt: the rule-based
// diagnosis, or the note of a profile not taken ("ncu not found"). Both empty when the verdict has
// no profile or its JSON is damaged (advice only: nothing fails for want of it).
struct ProfileAdvice {
  std::string diagnosis, not_profiled;
};
ProfileAdvice profile_advice(const std::string& verdict_json);

// Replaces held-out config names in text that is going back to a model (a diagnostic, a
// mismatch line). Evolution evaluates visible configs only, so this is a second line of defence.
std::string scrub_held_out(std::string text, const Task& task);

// What a model or agent is told of a kernel that failed on the held-out shapes: that it did, and
// what to look at, never which shapes.
const char* held_out_failure_text();

}  // namespace kevo::evolve
