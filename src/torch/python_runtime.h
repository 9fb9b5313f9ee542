// What a kevo-runner needs to embed the Python of kevo's PyTorch bridge as a Python candidate
// runtime (runner/python_host.h): that interpreter's shared libpython and its sys.path, asked of
// the interpreter itself once per process, and the folders a confined runner must still read.
#pragma once

#include <string>
#include <vector>

#include "util/result.h"

namespace kevo::torch {

struct PythonRuntime {
  std::string python;                 // the interpreter asked (find_torch_python)
  std::string libpython;              // absolute path of its shared library
  std::vector<std::string> sys_path;  // kevo's python/ folder first, then the interpreter's
  std::vector<std::string> read_dirs;  // sys.path folders outside the system ones (site-packages)
};

// ErrorCode::kNoTorch when there is no Python with torch; an error naming the interpreter when it
// has no shared libpython (a statically linked python: kevo's runner cannot embed it).
Result<PythonRuntime> python_runtime();

}  // namespace kevo::torch
