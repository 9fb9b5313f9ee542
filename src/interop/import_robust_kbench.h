// `kevo import robust-kbench DIR...` (docs/INTEROP.md): a robust-kbench task folder becomes a kevo
// forward task and, where the folder has func_backward.py, a backward task (`[backward]`,
// docs/TASK_FORMAT.md) next to it, both with the PyTorch oracle. The analysis is kernelbench's
// (import_probe.h); robust-kbench's multi_* configurations are tried as visible configs first.
#pragma once

#include <filesystem>
#include <vector>

#include "interop/import.h"
#include "torch/bridge.h"
#include "util/result.h"

namespace kevo::interop {

// The forward task (named after the folder, or opts.name), then the backward task (<name>_backward)
// where there is one; a backward whose forward failed fails naming it.
std::vector<Result<ImportedTask>> import_robust_kbench(torch::TorchBridge& bridge, const std::filesystem::path& dir,
                                                       const ImportOptions& opts);

}  // namespace kevo::interop
