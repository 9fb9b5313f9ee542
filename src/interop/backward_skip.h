// Why `kevo import kernelbench --backward` writes no backward task for a problem (docs/INTEROP.md):
// the reason codes, each printed as one line beside the forward task, which is imported anyway.
#pragma once

#include <string>

namespace kevo::interop {

// Why a differentiable-looking problem gets no backward task (its forward import still succeeds).
enum class BackwardSkip {
  kNonFloatOutput,  // an output is not floating-point (argmax, argmin, a mask): no gradient flows in
  kNoGradTarget,    // no floating-point tensor input and no floating-point parameter
  kDisconnected,    // no output depends on any of them (detached, computed under no_grad, constant)
  kInplace,         // a tensor the backward needs is modified in place after autograd saved it
  kNotModule,       // a functional file (module_fn): the backward module patches Model
};
std::string to_string(BackwardSkip s);

struct BackwardSkipped {
  BackwardSkip reason;
  std::string detail;  // one line: which output, which tensor
};

}  // namespace kevo::interop
