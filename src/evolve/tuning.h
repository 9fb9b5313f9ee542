// Offline tuning: with no model configured, kevo searches the values of constants a kernel marks
// as tunable. The annotation goes on the defining line (or the line just above it):
//
//   #define BLOCK 256                 // kevo: tune BLOCK in {128, 256, 512}
//   constexpr int kItems = 4;         // kevo: tune kItems in {1, 2, 4, 8}
//
// Values are tokens (numbers or identifiers) separated by commas. Every combination is a
// variant (cartesian product, the source's own values first), capped by the candidate budget.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace kevo::evolve {

struct Tunable {
  std::string name;
  std::vector<std::string> values;
  int line = 0;         // 1-based line of the definition
  std::string current;  // the value in the source
};

struct Variant {
  std::string source;
  std::vector<std::pair<std::string, std::string>> assignment;  // name -> value
  std::string label() const;  // "BLOCK=256 kItems=4"
};

// Errors name the line of a malformed annotation or one without a definition to change.
Result<std::vector<Tunable>> find_tunables(std::string_view source);
// All combinations, the current values first, at most `limit`.
Result<std::vector<Variant>> enumerate_variants(std::string_view source, size_t limit);

}  // namespace kevo::evolve
