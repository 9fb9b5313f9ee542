// Turning PyTorch problem files into kevo tasks (docs/INTEROP.md):
//   * KernelBench files: `class Model(nn.Module)`, `get_inputs()`, `get_init_inputs()`, sizes as
//     top-level names bound to integers however written (`N = 2048 * 2`, tuples);
//   * EvoEngineer / AI CUDA Engineer records: original module, functional module and a CUDA
//     PyTorch extension.
// The analysis is import_probe.h (shapes only, nothing materialized at full size), the configs
// config_search.h, the FLOPs flops.h, the text import_toml.h.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "interop/backward_skip.h"
#include "task/task.h"
#include "torch/bridge.h"
#include "util/result.h"

namespace kevo::interop {

// A config an imported task loses because a kernel that does not compute the op would pass it.
struct DroppedConfig {
  std::string config, why;
};

struct VetResult {
  std::vector<DroppedConfig> dropped;
  std::vector<std::string> notes;  // findings that keep the config (an input the op ignores)
};

// Judges an imported task as written (its tolerance derived) before it is published: the configs
// to drop, or an error that refuses the task. The CLI passes the lint (lint/torch_lint.h), which
// sits a layer above import.
using VetTask = std::function<Result<VetResult>(torch::TorchBridge&, const Task&)>;

struct ImportOptions {
  std::filesystem::path out_dir;  // the task is written to out_dir/<name>
  std::string name;               // empty: from the file (or record) name
  std::string category;           // empty: guessed from the name and source
  std::string flops;              // empty: derived from the module's ops (else a flagged lower bound)
  bool overwrite = false;
  uint64_t seed = 0;
  VetTask vet;  // empty: not vetted
};

struct ImportedTask {
  std::string name;
  std::filesystem::path dir;
  std::vector<std::string> notes;  // configs dropped, estimates made, ...
  std::optional<BackwardSkipped> backward_skipped;  // --backward: why this forward task has none
};

// One EvoEngineer / AI CUDA Engineer record.
struct EvoRecord {
  std::string name;        // task name (sanitized later)
  std::string original;    // org_py_code / PyTorch_Code_Module
  std::string functional;  // func_py_code / PyTorch_Code_Functional
  std::string cuda;        // cuda_code / CUDA_Code (a PyTorch C++/CUDA extension)
};

// "19_ReLU.py" -> "19_relu": lower case, [a-z0-9_] only.
std::string task_name_from(const std::string& stem);

// The problem files named by `args`: files as given, folders (a KernelBench level) as their *.py
// files ordered by the problem number that starts their name. An error names a path that is
// neither.
Result<std::vector<std::filesystem::path>> kernelbench_files(const std::vector<std::string>& args);

struct ProblemShape;
// `shape`, when given, receives the forward's analysis (for its backward task, import_backward.h).
Result<ImportedTask> import_kernelbench(torch::TorchBridge& bridge, const std::filesystem::path& file,
                                        const ImportOptions& opts, ProblemShape* shape = nullptr);

// Reads an EvoEngineer dataset: a JSON object {name: {org_py_code, func_py_code, cuda_code}} or an
// array of records (AI CUDA Engineer keys Op_Name, PyTorch_Code_Module, PyTorch_Code_Functional,
// CUDA_Code are accepted too). Errors name the file and the record.
Result<std::vector<EvoRecord>> parse_evoengineer(const std::filesystem::path& file);

// The functional module becomes reference.py (the oracle), the original module original.py and the
// CUDA extension torch_baseline.cu.
Result<ImportedTask> import_evoengineer_record(torch::TorchBridge& bridge, const EvoRecord& rec,
                                               const std::filesystem::path& source,
                                               const ImportOptions& opts);

}  // namespace kevo::interop
