// Shape entries as expressions of a task's dims (docs/INTEROP.md, "kevo import kernelbench"): each
// entry of each tensor the bridge describes is fitted from its value at the original sizes and at
// one probe per size (that size moved by a known delta), then checked at every other config.
// Forms: linear in the sizes (`2*dim + 1`), or, for FLOP factors, floor-linear
// (`ceil_div(height - 2, 2)`, a strided conv's output); what neither form fits becomes a derived
// dim measured per config.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "torch/bridge.h"

namespace kevo::interop {

using Dims = std::map<std::string, int64_t>;

// A tensor slot in a description: arguments, weights and outputs, in order.
struct Slot {
  std::string key;   // "arg:x", "weight:conv_weight", "out:out"
  std::string name;  // kevo name
  std::vector<int64_t> shape;
};

std::vector<Slot> slots_of(const torch::Description& d);
// Same tensors with the same ranks (the shapes may differ).
bool same_structure(const std::vector<Slot>& a, const std::vector<Slot>& b);

// floor((sum of coef*dim + constant) / divisor), or a derived dim when `derived` is set.
struct Axis {
  std::map<std::string, int64_t> coef;
  int64_t constant = 0;
  int64_t divisor = 1;
  std::string derived;
};

std::string axis_expr(const Axis& a, const std::vector<std::string>& order);
int64_t eval_axis(const Axis& a, const Dims& dims);
bool axis_is_constant(const Axis& a);

// One value of an entry at the original sizes plus one per probed size.
struct AxisSamples {
  int64_t base = 0;
  std::map<std::string, std::pair<int64_t, int64_t>> probes;  // size -> (delta, value)
};

// The first form that agrees with the samples and with every check (dims -> value): linear, then
// floor-linear with divisors 2..max_divisor. nullopt when none does.
std::optional<Axis> fit_axis(const AxisSamples& s, const Dims& base,
                             const std::vector<std::pair<const Dims*, int64_t>>& checks, int max_divisor);

// "(a + b)" for sums, "a" otherwise: a factor of a product.
std::string paren(const std::string& e);

}  // namespace kevo::interop
