// The configurations of an imported task (docs/INTEROP.md): the original sizes (main), then
// visible variants (ragged, minus_one, small, plus_one) and held-out ones (held, held_unit,
// held_plus). A variant the module rejects (GroupNorm's groups must divide the channels, heads
// must divide the hidden size, a kernel must fit its input) is searched for nearby: the same
// change on one size at a time, and values that keep a factor of the original size (a multiple
// of 2, 4, 8, ... of it) while varying the multiplier. Each try is one shapes-only load.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "interop/shape_fit.h"
#include "util/result.h"

namespace kevo::interop {

// What one validated load told: the tensors' shapes (and, when counted, the FLOP records).
struct ConfigProbe {
  std::vector<Slot> slots;
  std::optional<torch::ojson> flops;  // the count_flops reply
};

struct FoundConfig {
  std::string name;
  Dims dims;
  bool held_out = false;
  ConfigProbe probe;
};

// Loads the reference at `dims` (shapes only); an error when the module rejects them.
using ValidateConfig = std::function<Result<ConfigProbe>(const Dims&)>;

// main first; up to 3 more visible and 2 held-out configs. Notes say what was dropped and why.
std::vector<FoundConfig> search_configs(const std::vector<std::string>& sizes, const FoundConfig& main,
                                        const ValidateConfig& validate, std::vector<std::string>& notes);

// The divisors of v greater than 1, ascending (v itself last).
std::vector<int64_t> divisors_of(int64_t v);

}  // namespace kevo::interop
