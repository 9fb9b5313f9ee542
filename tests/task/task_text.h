// A valid task.toml for the tests of task/ (two inputs of f32 and i32, one f32 output, a scalar,
// three visible configs and a held-out one; config b is the main one), and the edit its variations
// are made with. Header-only, for tests/task.
#pragma once

#include <gtest/gtest.h>

#include <string>

namespace kevo::test {

inline const char* const kGood = R"(
name = "softmax"
category = "softmax"
description = "Row softmax."
dims = ["B", "N"]
flops = "5*B*N"
bytes = "8*B*N"
[[inputs]]
name = "x"
dtype = "f32"
shape = ["B", "N"]
init = { dist = "normal", std = 2.0 }
[[inputs]]
name = "idx"
dtype = "i32"
shape = ["B"]
init = { dist = "int", low = 0, high = "N" }
[[outputs]]
name = "y"
dtype = "f32"
shape = ["B", "N"]
[[scalars]]
name = "eps"
value = 1e-5
[[configs]]
name = "a"
dims = { B = 64, N = 64 }
[[configs]]
name = "b"
dims = { B = 100, N = 33 }
main = true
[[configs]]
name = "c"
dims = { B = 2, N = 2 }
[[configs]]
name = "h"
dims = { B = 7, N = 9 }
held_out = true
[tolerance]
f32 = { atol = 1e-3 }
)";

// `s` with the first `from` replaced by `to` (which must be there).
inline std::string replace(std::string s, const std::string& from, const std::string& to) {
  auto p = s.find(from);
  EXPECT_NE(p, std::string::npos) << from;
  return s.replace(p, from.size(), to);
}

}  // namespace kevo::test
