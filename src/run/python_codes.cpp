#include "run/python_codes.h"

namespace kevo::proto {

const char* python_rc_name(int rc) {
  switch (static_cast<PythonRc>(rc)) {
    case PythonRc::kOk: return "ok";
    case PythonRc::kEarlyExit: return "early_exit";
    case PythonRc::kForwardRaised: return "forward_raised";
    case PythonRc::kFlagFlipped: return "flag_flipped";
    case PythonRc::kNotATensor: return "not_a_tensor";
    case PythonRc::kTensorSubclass: return "tensor_subclass";
    case PythonRc::kAliasedInput: return "aliased_input";
    case PythonRc::kOutputReused: return "output_reused";
    case PythonRc::kInputModified: return "input_modified";
    case PythonRc::kOutputCount: return "output_count";
    case PythonRc::kDtypeChanged: return "dtype_changed";
    case PythonRc::kOutputShape: return "output_shape";
    case PythonRc::kWeights: return "weights";
    case PythonRc::kConstruct: return "construct";
    case PythonRc::kNotLoaded: return "not_loaded";
    case PythonRc::kInlineBuild: return "inline_build";
    case PythonRc::kInternal: return "internal";
  }
  return nullptr;
}

bool python_rc_is_format(int rc) {
  const auto c = static_cast<PythonRc>(rc);
  return (rc > 100 && rc <= 110 && c != PythonRc::kForwardRaised) || c == PythonRc::kOutputShape ||
         c == PythonRc::kWeights;
}

}  // namespace kevo::proto
