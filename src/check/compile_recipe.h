// How a candidate of a task is compiled: one recipe for the checker's compile phase and for the
// pre-compile a search runs ahead of it (evolve/gpu_evaluator.cpp), so both ask the compile cache
// for the same key and the checker finds the pre-compiled library. Thread-safety: pure functions.
#pragma once

#include <filesystem>
#include <string>

#include "compile/nvcc.h"
#include "task/task.h"

namespace kevo {

// arch: "sm_90" (an "a" suffix is the compiler's business: compile/nvcc.h picks sm_90a itself);
// cache_dir: empty for kevo's default.
CompileOptions candidate_compile_options(const Task& task, const std::string& arch,
                                         const std::filesystem::path& cache_dir = {});

// The architecture a device is remembered by: "sm_90a" and "sm_90" are one device's.
std::string device_arch(std::string arch);

}  // namespace kevo
