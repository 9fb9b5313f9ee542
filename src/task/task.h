// A kernel task: what to compute, on which shapes, and how outputs are checked (docs/TASK_FORMAT.md).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "task/dtype.h"
#include "task/expr.h"
#include "util/result.h"

namespace kevo {

enum class Dist { Normal, Uniform, Laplace, Exponential, LogNormal, Int };

struct InitSpec {
  Dist dist = Dist::Normal;
  // normal/lognormal: a=mean b=std; uniform: a=low b=high; laplace: a=loc b=scale; exponential: a=rate
  double a = 0, b = 1;
  std::string low_expr, high_expr;  // int: bounds as expressions of the dims (high exclusive)
  bool wide = true;                 // also drawn once from a wider distribution
  std::optional<double> min;        // float draws: values below it are raised to it
};

enum class Role { Input, Weight, Output };

struct TensorSpec {
  std::string name;
  DType dtype = DType::F32;
  std::vector<std::string> shape;  // expressions of the dims
  Role role = Role::Input;
  InitSpec init;
};

struct ScalarSpec {
  std::string name;
  double value = 0;
};

struct Config {
  std::string name;
  DimValues dims;
  bool held_out = false;
};

struct Tolerance {
  double atol = 1e-4, rtol = 1e-4;
};

// One gradient a backward task produces: its output `output` is the gradient of the forward's
// tensor `of`; each element sums `sums_over` terms (an expression of the dims: a weight gradient
// sums over the batch), which sets the tolerance it needs (task/backward.h).
struct GradientSpec {
  std::string output, of, sums_over;
};

// A task that is the backward of another (docs/TASK_FORMAT.md, [backward]). Every input is
// saved (a forward input of the same name, drawn exactly as the forward draws it), a saved output
// (a forward output the backward reads, as PyTorch's ReLU keeps its result: drawn from the task's
// own init, which must give values the forward could produce) or an incoming gradient of a forward
// output; every output is a gradient. Whatever else the backward needs (a mean, a softmax) it
// recomputes from the saved tensors, so no input ever comes from code kevo does not trust.
struct BackwardSpec {
  std::string of;                   // the forward task's name: the folder next to this task's
  std::vector<std::string> saved;   // inputs of this task that are the forward's inputs
  std::vector<std::pair<std::string, std::string>> saved_outputs;  // input -> forward output
  std::vector<std::pair<std::string, std::string>> grad_outputs;   // input -> forward output
  std::vector<GradientSpec> gradients;                              // one per output, in order
};

struct ResolvedConfig;  // task/resolved.h

struct Task {
  std::filesystem::path dir;
  std::string name, category, description;
  std::vector<std::string> dims;
  std::vector<TensorSpec> inputs, outputs;
  std::vector<ScalarSpec> scalars;
  std::vector<Config> configs;
  size_t main_config = 0;
  std::map<DType, Tolerance> tolerance;
  std::string flops_expr, bytes_expr, workspace_expr = "0";
  bool allow_cublas = false, allow_cudnn = false;
  bool inplace = false;
  bool oracle_is_reference = false;  // oracle = "reference": check candidates against the CPU code
  bool oracle_is_torch = false;      // oracle = "torch": the PyTorch reference (torch_reference)
  std::string torch_reference;       // file in dir, e.g. "reference.py" (KernelBench-style module)
  std::string torch_baseline;        // optional PyTorch-extension baseline (EvoEngineer records)
  std::optional<BackwardSpec> backward;  // set: this task is the backward of backward->of
  // Not from task.toml: the baseline is the PyTorch reference's own Model run by the Python
  // candidate runtime (`kevo eval` of a KernelBench solution times it against eager this way).
  bool baseline_is_torch_model = false;

  std::filesystem::path baseline_path() const { return dir / "baseline.cu"; }
  std::filesystem::path reference_path() const { return dir / "reference.cpp"; }
  std::filesystem::path torch_reference_path() const { return dir / torch_reference; }
  // Tasks imported from PyTorch have no CUDA baseline until `kevo translate` writes one.
  bool has_baseline() const;
  bool has_cpu_reference() const;
  const Config& main() const { return configs[main_config]; }
  Tolerance tolerance_for(DType t) const;
  // Everything the checker needs of config `c` (task/resolved.h): shapes, sizes, dims, flops,
  // bytes, workspace and tolerance. Errors (ErrorCode::kParse) name the task, config and tensor or
  // field; every config of a loaded task resolves (load_task checks it).
  Result<ResolvedConfig> resolve(const Config& c) const;
  // One tensor's shape, or one expression of the task (resolve gives them all, with sizes).
  Result<std::vector<int64_t>> shape_of(const TensorSpec& t, const Config& c) const;
  Result<double> flops(const Config& c) const { return eval_expr(flops_expr, c.dims); }
  Result<double> bytes(const Config& c) const { return eval_expr(bytes_expr, c.dims); }
  Result<int64_t> workspace_bytes(const Config& c) const {
    return eval_int_expr(workspace_expr, c.dims);
  }
  std::vector<int64_t> dim_values(const Config& c) const;
  // The dtype that sets the task's precision (the first output's).
  DType precision() const { return outputs.empty() ? DType::F32 : outputs[0].dtype; }
};

// The longest name of a dim, tensor or scalar.
inline constexpr size_t kMaxNameLength = 64;
// A dim, tensor or scalar name: [A-Za-z_][A-Za-z0-9_]*, at most kMaxNameLength characters. Names
// are pasted into generated code (export-torch, host examples), so nothing else is accepted.
bool is_identifier(std::string_view s);

// Loads and validates dir/task.toml. Errors name the file, line and field; their code is
// ErrorCode::kParse for a malformed file, kNotFound for a missing folder or file, kIo for an
// unreadable one.
Result<Task> load_task(const std::filesystem::path& dir);
// Same, from text (for tests); `file` is used in messages only.
Result<Task> parse_task(std::string_view toml_text, const std::filesystem::path& file);

}  // namespace kevo
