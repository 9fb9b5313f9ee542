// `kevo export-torch` (and later `kevo export RUN --torch`): a kernel in the kevo ABI as a PyTorch
// extension. Writes into DIR:
//   kernel.cu      the kernel, unchanged
//   kevo/kernel.h  the ABI header it includes
//   ext.cpp        a torch::Tensor wrapper that checks device, dtype, rank, contiguity and shapes
//                  (TORCH_CHECK, naming the input and what was expected), derives the dims from the
//                  input shapes, allocates the outputs and calls kevo_forward on the current stream
//   loader.py      torch.utils.cpp_extension.load(...) plus forward(*tensors) and, for tasks with a
//                  PyTorch reference, KevoModule(model): a drop-in for the reference Model
//   test_ext.py    builds the extension and checks it against the original module, and that bad
//                  inputs are rejected
//   reference.py / original.py   copied from the task when it has them
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "task/task.h"
#include "util/result.h"

namespace kevo::interop {

struct ExportOptions {
  std::string module_name;  // the extension's name; empty: "kevo_<task name>"
  bool overwrite = true;    // replace files already in DIR
};

Status export_torch(const Task& task, const std::filesystem::path& kernel_cu,
                    const std::filesystem::path& out_dir, const ExportOptions& opts = {});

// A kevo shape/dims expression as C++ over int64_t variables named d_<dim> (exposed for tests).
Result<std::string> expr_to_cpp(const std::string& expr);

// Escaping for what generated sources paste, whatever it holds (names are validated anyway):
// the inside of a C++ string literal (quotes, backslashes, newlines, "??", every other byte
// outside printable ASCII as octal), a whole C++ literal, and a whole Python literal ("...", \xNN).
std::string cpp_escape(std::string_view s);
std::string cpp_string_literal(std::string_view s);
std::string py_string_literal(std::string_view s);

}  // namespace kevo::interop
