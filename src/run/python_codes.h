// The return codes of a Python candidate's calls (python/kevo_bridge/candidate_runtime.py returns
// them; tests/run/python_codes_test.cpp keeps the two lists equal): what the runtime found wrong
// with a call, for the verdict's reason. A code is the candidate process's word: it can only make
// a verdict worse (a call that returned 0 is still judged from outside).
#pragma once

#include <optional>

namespace kevo::proto {

enum class PythonRc {
  kOk = 0,
  kEarlyExit = 101,     // forward raised SystemExit/KeyboardInterrupt
  kForwardRaised = 102,
  kFlagFlipped = 103,   // a global numerics switch changed (torch.backends, default dtype)
  kNotATensor = 104,
  kTensorSubclass = 105,  // a lazy or storage-less result
  kAliasedInput = 106,
  kOutputReused = 107,  // a result object (or its storage) returned by an earlier call
  kInputModified = 108,
  kOutputCount = 109,
  kDtypeChanged = 110,  // e.g. fp16 results of a fp32 task
  kOutputShape = 120,
  kWeights = 121,       // the solution's module lacks one of Model's weights, or holds it in another shape
  kConstruct = 122,     // its module could not be made for a config's sizes
  kNotLoaded = 123,
  kInlineBuild = 124,   // it builds an extension in its own process (torch.utils.cpp_extension)
  kInternal = 125,      // the runtime itself failed
};

// The code's name as the format checks spell it ("tensor_subclass"); nullptr for an unknown code.
const char* python_rc_name(int rc);
// Whether the code breaks a rule of the format (kFormat) rather than failing to run (kCrash).
bool python_rc_is_format(int rc);

}  // namespace kevo::proto
