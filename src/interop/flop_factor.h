// One factor of a counted FLOP record (a shape entry of an op's tensor) as an expression of a
// task's dims, tried in this order: floor-linear in the sizes (shape_fit.h: `2*dim + 1`,
// `ceil_div(height - 2, 2)`), a constant times a product of up to three sizes (the flattened rows
// of a 3D tensor matmul, `batch_size*channels` of an instance norm), or a derived dim that holds
// its value at every config (the window count of a strided pool, measured per config).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "interop/shape_fit.h"

namespace kevo::interop {

// A factor's value at the original sizes, at each size's probe and at each check (dims -> value).
// Checks carry every dim (derived ones too); `all_configs` says the checks cover every config of
// the task, which a derived dim needs (it is known at configs only).
struct FactorSamples {
  AxisSamples axis;
  std::vector<std::pair<const Dims*, int64_t>> checks;
  const Dims* main_dims = nullptr;  // the main config's dims, derived ones included
  bool all_configs = false;
};

// coef * product(names): the factor's expression is `coef*names[0]*...`; no names: a constant.
struct FactorFit {
  int64_t coef = 1;
  std::vector<std::string> names;
};

std::optional<FactorFit> fit_factor(const FactorSamples& s, const Dims& base, const std::vector<std::string>& order,
                                    const std::vector<std::string>& derived);

}  // namespace kevo::interop
