// `kevo import kernelbench --backward` (docs/INTEROP.md, "Backward tasks of KernelBench problems"):
// beside a problem's forward task, a backward task <name>_backward whose PyTorch oracle computes,
// by torch.autograd through the problem's own module, the gradients of the floating-point inputs
// and parameters the outputs depend on; or the reason there is none (BackwardSkip). Shared with
// `kevo import robust-kbench`: how a backward's analysis adopts its forward's, and the tolerance a
// number of summed terms needs.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "interop/backward_skip.h"
#include "interop/import.h"
#include "interop/import_probe.h"
#include "torch/bridge.h"
#include "util/result.h"

namespace kevo::interop {

// What autograd reaches from the forward's outputs (the bridge's grad_probe, on the meta device).
struct GradProbe {
  enum class Verdict { kOk, kDisconnected, kInplace, kUnknown };
  Verdict verdict = Verdict::kUnknown;
  std::string error;                 // kInplace, kUnknown: why
  std::vector<bool> args;            // kOk: per forward argument, whether an output depends on it
  std::vector<std::string> weights;  // kOk: the parameters (torch paths) the outputs depend on
};
Result<GradProbe> parse_grad_probe(const torch::ojson& reply);

// The reasons the forward's description alone gives (its output dtypes, its inputs and weights).
std::optional<BackwardSkipped> static_backward_skip(const torch::Description& fwd);
// The reason a probe gives, or none (kOk; kUnknown: the gradients are taken of every candidate).
std::optional<BackwardSkipped> probe_backward_skip(const GradProbe& probe);

// How many terms one element of the gradient of tensor `target` may sum, from the axis expressions
// of every tensor the forward sees (its inputs, weights and outputs; `target` indexes them): the
// largest of, for each other tensor, the product of its axes that `target` lacks (a weight gradient
// sums over the batch and the positions of the input and output, an input's over the output features
// or a kernel window), and the product of target's axes after its first (a reduction along its own
// axes: a softmax, a norm). Identical products are listed once; each is (tensor, axis) positions.
struct SumsOverTerms {
  std::vector<std::vector<std::pair<size_t, size_t>>> products;
};
SumsOverTerms sums_over_terms(const std::vector<std::vector<std::string>>& axes, size_t target);
// "max(a*b, c)" of the products, with `axes` giving each position's expression ("1" when there are none).
std::string sums_over_text(const SumsOverTerms& t, const std::vector<std::vector<std::string>>& axes);
// The value, with `extent(tensor, axis)` giving each position's extent on one config.
double sums_over_value(const SumsOverTerms& t, const std::function<double(size_t, size_t)>& extent);

// The f32 atol for gradients summing up to `terms` terms: reduction_atol (task/backward.h), at
// least kevo's default 1e-4, rounded up to two significant digits.
double gradient_atol(double terms);

// A backward task's analysis takes its forward's: the saved inputs' statistics (the same draws) and
// the derived dims' names (`grad_out_d2` -> `out_d2`).
void adopt_forward(ProblemShape& backward, const ProblemShape& forward);

struct BackwardImport {
  std::optional<Result<ImportedTask>> task;  // written (or failed)
  std::optional<BackwardSkipped> skipped;    // no task, and why
};

// The backward task of the KernelBench problem `file`, whose forward task `forward_name` was just
// imported with analysis `forward`. Shapes only: nothing is materialized at full size.
BackwardImport import_kernelbench_backward(torch::TorchBridge& bridge, const std::filesystem::path& file,
                                           const std::string& forward_name, const ProblemShape& forward,
                                           const ImportOptions& opts);

}  // namespace kevo::interop
