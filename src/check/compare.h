// Output comparison: candidate vs oracle, elementwise with the task's tolerance.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "check/reason.h"
#include "task/task.h"
#include "task/tensor.h"

namespace kevo {

// Byte pattern the runner fills outputs with before a call (poison 0); an element still holding it
// afterwards was never written.
constexpr uint8_t kPoisonByte = 0xFF;

struct Comparison {
  bool ok = true;
  int64_t count = 0;
  int64_t mismatches = 0;
  int64_t unwritten = 0;      // elements still equal to the poison pattern
  int64_t nonfinite = 0;      // NaN/Inf where the reference is finite
  double max_abs_err = 0, max_rel_err = 0;
  int64_t first_bad = -1;     // flat index of the first failing element
  double first_got = 0, first_want = 0;
  Reason reason = Reason::kNone;  // kUnwritten, kNan, kMismatch (most telling first); kNondeterministic

  // "3 of 1024 elements differ; first at [0, 5]: got 1.25, want 1.5; max abs err 0.25 ..."
  std::string describe(const std::vector<int64_t>& shape) const;
};

// A reference output: the CPU reference's double values, or an oracle's output tensor (the GPU
// baseline, PyTorch) read element by element where it lies. Converting a GB-sized oracle tensor
// to doubles would cost twice its size in fresh memory on every draw.
struct Expected {
  std::vector<double> values;        // when !tensor
  std::optional<HostTensor> tensor;  // when set, the reference itself
  static Expected of(std::vector<double> v) { return {std::move(v), std::nullopt}; }
  static Expected of(HostTensor t) { return {{}, std::move(t)}; }
  int64_t size() const { return tensor ? tensor->numel() : static_cast<int64_t>(values.size()); }
  double at(int64_t i) const { return tensor ? tensor->at(static_cast<size_t>(i)) : values[static_cast<size_t>(i)]; }
};

Comparison compare_output(const HostTensor& got, const Expected& want, Tolerance tol, bool check_poison);
// The reference as double values (from the CPU reference or a converted oracle tensor).
Comparison compare_output(const HostTensor& got, const std::vector<double>& want, Tolerance tol,
                          bool check_poison);
std::vector<double> to_doubles(const HostTensor& t);

// Elements still holding the poison pattern where it reads as NaN/Inf (floats): never written.
int64_t count_unwritten(const HostTensor& t);

// Two runs of the same candidate on the same inputs must agree within tolerance.
Comparison compare_runs(const HostTensor& a, const HostTensor& b, Tolerance tol);

std::string format_index(int64_t flat, const std::vector<int64_t>& shape);

}  // namespace kevo
