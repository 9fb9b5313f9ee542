// `kevo export RUN`: the winning kernel as a standalone .cu, with the ABI header beside it and a
// small host program (main.cu) that allocates the task's inputs for one visible configuration,
// fills them with random values, calls kevo_forward on a stream and times it.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "task/task.h"
#include "util/result.h"

namespace kevo::interop {

struct ExportedFiles {
  std::filesystem::path kernel, main, header, readme;
  std::string build_command;  // run in the output directory
};

// `config` names a visible configuration (empty: the task's timed one). A held-out one is
// refused: the export must not leak it either.
Result<ExportedFiles> export_kernel(const Task& task, const std::string& source, const std::string& provenance,
                                    const std::filesystem::path& out_dir, const std::string& config = {},
                                    const std::string& arch = "sm_90");

// The host example's source (for tests).
Result<std::string> host_example(const Task& task, const Config& cfg, const std::string& arch);

}  // namespace kevo::interop
