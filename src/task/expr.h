// Arithmetic expressions over named dimensions ("2*N+1", "ceil_div(N,32)"), used for shapes,
// flops, bytes and integer init bounds in task.toml.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "util/result.h"

namespace kevo {

using DimValues = std::map<std::string, int64_t>;

// Evaluates `text`; errors say where in the expression and what is wrong.
Result<double> eval_expr(std::string_view text, const DimValues& dims);
// Like eval_expr, but the result must be an exact integer.
Result<int64_t> eval_int_expr(std::string_view text, const DimValues& dims);
// The identifiers an expression refers to (function names excluded); fails on syntax errors.
Result<std::set<std::string>> expr_names(std::string_view text);

}  // namespace kevo
