// Turning PyTorch problem files into kevo tasks (docs/INTEROP.md):
//   * KernelBench files: `class Model(nn.Module)`, `get_inputs()`, `get_init_inputs()`, sizes as
//     top-level integer assignments (`batch_size = 16`);
//   * EvoEngineer / AI CUDA Engineer records: original module, functional module and a CUDA
//     PyTorch extension.
// The task's dims are the sizes that change a tensor shape (found by probing the bridge with each
// size perturbed); shapes are linear expressions of them, or derived dims measured per config
// where they are not (a strided conv's output size). Configs: the original sizes (main), non-aligned
// variants, a small one and held-out ones, each validated by the bridge.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "interop/bridge.h"
#include "util/result.h"

namespace kevo::interop {

struct ImportOptions {
  std::filesystem::path out_dir;  // the task is written to out_dir/<name>
  std::string name;               // empty: from the file (or record) name
  std::string category;           // empty: guessed from the name and source
  std::string flops;              // empty: a conservative estimate (flagged in task.toml)
  bool overwrite = false;
  uint64_t seed = 0;
};

struct ImportedTask {
  std::string name;
  std::filesystem::path dir;
  std::vector<std::string> notes;  // configs dropped, estimates made, ...
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

Result<ImportedTask> import_kernelbench(TorchBridge& bridge, const std::filesystem::path& file,
                                        const ImportOptions& opts);

// Reads an EvoEngineer dataset: a JSON object {name: {org_py_code, func_py_code, cuda_code}} or an
// array of records (AI CUDA Engineer keys Op_Name, PyTorch_Code_Module, PyTorch_Code_Functional,
// CUDA_Code are accepted too). Errors name the file and the record.
Result<std::vector<EvoRecord>> parse_evoengineer(const std::filesystem::path& file);

// The functional module becomes reference.py (the oracle), the original module original.py and the
// CUDA extension torch_baseline.cu.
Result<ImportedTask> import_evoengineer_record(TorchBridge& bridge, const EvoRecord& rec,
                                               const std::filesystem::path& source,
                                               const ImportOptions& opts);

}  // namespace kevo::interop
