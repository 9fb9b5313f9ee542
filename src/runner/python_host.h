// The interpreter of kevo's Python candidate runtime, embedded in a kevo-runner: libpython opened
// at run time (the checker names it: the same Python its bridge uses, with that Python's sys.path),
// so the runner binary depends on no Python and any CPython 3 serves. The Python half is
// python/kevo_bridge/candidate_runtime.py. Order of use: start (before the sandbox closes: torch
// imported, the task read), load (after it: the candidate's module run), then call per kevo_args.
// One per process; calls come from the runner's one thread, which takes the GIL for each.
#pragma once

#include <string>
#include <vector>

#include <kevo/kernel.h>

#include "util/result.h"

namespace kevo::runner {

struct PythonStart {
  std::string libpython;              // e.g. /usr/lib/x86_64-linux-gnu/libpython3.12.so.1.0
  std::vector<std::string> sys_path;  // the interpreter's sys.path, kevo's python/ folder first
  std::string meta_json;              // the task as candidate_runtime.prepare reads it
  std::string device = "cuda";        // "cpu": tensors over host memory (tests)
};

class PythonHost {
 public:
  // The process's host, started once; an error names what could not be opened or imported. The
  // version strings are the interpreter's and torch's.
  static Result<PythonHost*> start(const PythonStart& s);
  static PythonHost* get();  // nullptr before start

  // Runs the module whose source is in fd (-1: the problem's own Model) and finds `entry`.
  Status load(int fd, const std::string& filename, const std::string& entry);
  // One call; non-zero codes are run/python_codes.h's, and last_error() says why.
  int call(const kevo_args* a);
  std::string last_error();
  std::string versions() const { return versions_; }

  // The ForwardFn the runner keeps for a Python slot.
  static int forward(const kevo_args* a);

 private:
  PythonHost() = default;
  std::string versions_;
  void* call_fn_ = nullptr;  // candidate_runtime.call (a PyObject*)
};

}  // namespace kevo::runner
