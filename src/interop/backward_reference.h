// The reference.py of an imported backward task (docs/INTEROP.md): the forward's PyTorch reference
// with its `Model` changed in place so that its forward takes the forward's arguments and the
// incoming gradient of each forward output, and returns, by torch.autograd through the forward's
// own code, the gradients the task asks for. Used by `kevo import robust-kbench` and `kevo import
// kernelbench --backward`. Nothing here runs Python.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kevo::interop {

// What the backward module computes: d(forward outputs)/d(arguments and parameters).
struct BackwardSignature {
  std::vector<std::string> args;          // the forward's arguments, in order (kevo names)
  std::vector<std::string> grad_outputs;  // one per forward output: "grad_" + output name
  std::vector<std::string> parameters;    // the parameters whose gradients are outputs (torch paths), in order
  std::vector<std::string> unsaved;       // parameters that become constants of the module, not inputs
  // Per argument, whether its gradient is an output; nullopt: every floating-point tensor argument.
  std::optional<std::vector<bool>> arg_grads;
};

// `forward_reference` (a file defining Model, get_inputs and get_init_inputs) followed by the
// backward block. `comment` (lines starting with '#') says where the task comes from. The gradients
// are those of the chosen arguments (each passed to the forward as a clone, so in-place ops on an
// input stay differentiable), then of `parameters`; the `unsaved` parameters become constants of the
// module (not inputs). On the meta device (kevo's shapes-only analysis) the gradients are empty
// tensors of the right shapes: torch has no meta kernels for most backward ops. get_inputs()
// appends one normal draw per forward output.
std::string backward_module_source(const std::string& forward_reference, const BackwardSignature& sig,
                                   const std::string& comment);

}  // namespace kevo::interop
