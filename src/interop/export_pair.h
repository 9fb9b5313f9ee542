// `kevo export-torch TASK KERNEL.cu DIR --backward BACKWARD_TASK [--backward-kernel KERNEL.cu]`: a
// forward kernel and a backward kernel (each optional: "-" or absent falls back to PyTorch) as one
// torch.autograd.Function (docs/INTEROP.md). Writes into DIR:
//   forward/, backward/   export_torch's files for each side that has a kernel
//   reference.py          the forward task's PyTorch reference (the fallback of either side)
//   autograd.py           KevoFunction (forward saves what the backward task's `saved` and `saved_outputs` name; backward
//                         calls the backward kernel) and KevoTrainModule(model); its docstring says
//                         which side is a kernel and which falls back to PyTorch
//   test_autograd.py      gradients of KevoTrainModule against plain autograd of the reference
#pragma once

#include <filesystem>
#include <optional>

#include "interop/export.h"
#include "task/task.h"
#include "util/result.h"

namespace kevo::interop {

// Whether the pair can be exported: the backward task is the backward of `forward`
// (task/backward.h), names are identifiers, and a side that falls back (`fallback`) has the
// forward task's PyTorch reference to fall back to. Writes nothing.
Status check_torch_pair(const Task& forward, const Task& backward, bool fallback);

// Errors: those of check_torch_pair; a kernel that export_torch refuses; a file that cannot be
// written.
Status export_torch_pair(const Task& forward, const std::optional<std::filesystem::path>& forward_kernel,
                         const Task& backward, const std::optional<std::filesystem::path>& backward_kernel,
                         const std::filesystem::path& out_dir);

}  // namespace kevo::interop
