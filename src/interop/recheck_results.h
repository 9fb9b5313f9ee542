// `kevo recheck`'s results file: one tab-separated row per solution checked, appended (and synced)
// as each is done, so an interrupted recheck resumes where it stopped. A row is reused when the
// solution's bytes (SHA-256) and the evaluator are the same; anything else is checked again.
//
// Columns: file, sha256, evaluator, problem, outcome, reason, eager, eager_low, eager_high,
// compile, compile_low, compile_high, claimed, kernelbench_allclose, seconds ("-" where empty;
// tabs, newlines and backslashes in the reason escaped as \t, \n, \\).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "interop/solution_verdict.h"
#include "util/result.h"

namespace kevo::interop {

struct RecheckRow {
  std::string file, sha256, evaluator, problem;
  SolutionVerdict verdict;
  std::optional<double> claimed;
  double seconds = 0;
};

// The rows of `path` (none when it does not exist yet). Errors name the file and line.
Result<std::vector<RecheckRow>> read_results(const std::filesystem::path& path);

// Appends one row (a header first when the file is new) and syncs it to disk.
Status append_result(const std::filesystem::path& path, const RecheckRow& row);

std::string result_line(const RecheckRow& row);
Result<RecheckRow> parse_result_line(const std::string& line);

}  // namespace kevo::interop
