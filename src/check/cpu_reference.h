// Running a task's trusted CPU reference (reference.cpp, compiled to a shared object) in-process.
#pragma once

#include <filesystem>
#include <vector>

#include "compile/nvcc.h"
#include "task/task.h"
#include "task/tensor.h"

namespace kevo {

class CpuReference {
 public:
  static Result<CpuReference> load(const std::filesystem::path& so);
  // The task's reference.cpp compiled for the host (cached like any compile) and loaded.
  static Result<CpuReference> compile(const Task& task, const CompileOptions& opts = {});
  CpuReference(CpuReference&& o) noexcept : handle_(o.handle_), fn_(o.fn_) { o.handle_ = nullptr; }
  ~CpuReference();
  // Outputs as double arrays, one per task output.
  Result<std::vector<std::vector<double>>> run(const Task& task, const Config& c,
                                               const std::vector<HostTensor>& inputs) const;

 private:
  CpuReference() = default;
  void* handle_ = nullptr;
  void* fn_ = nullptr;
};

}  // namespace kevo
