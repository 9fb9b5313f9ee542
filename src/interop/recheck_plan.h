// The inputs of `kevo recheck` (docs/KERNELBENCH.md): a folder of KernelBench solutions (Python
// modules defining ModelNew), a TSV of the speedups their authors claim, and a folder of problem
// files. Each solution is mapped to its problem by the problem id its claim row names, else by the
// number its file name carries (`L1_019_19_ReLU.py`, `19_ReLU.py`); the problem file is the one
// whose name starts with that number in the problems folder (KernelBench's `19_ReLU.py`, or
// CUDA-L1's `L1_019.py`).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "util/result.h"

namespace kevo::interop {

// One row of the claims TSV. Columns by header name: `file` (the solution, relative to the TSV's
// folder) and `claimed_speedup` are required; `problem_id`, `problem_name`, `claimed_correct`,
// `gpu` are read when present, other columns ignored.
struct Claim {
  std::string file;
  std::optional<int> problem_id;
  std::string problem_name, gpu;
  double speedup = 0;
  std::optional<bool> claimed_correct;
};

// Errors name the file, the line and the column.
Result<std::vector<Claim>> read_claims(const std::filesystem::path& tsv);

struct RecheckItem {
  std::filesystem::path solution;
  std::optional<Claim> claim;
  std::optional<std::filesystem::path> problem;
  std::string problem_error;  // why there is no problem (when `problem` is empty)
};

// Every .py file of `solutions` (recursively, in problem-number order), with its claim and
// problem. A solution that maps to no problem is kept with the reason; a claim row whose file is
// missing is an error naming the row.
Result<std::vector<RecheckItem>> plan_recheck(const std::filesystem::path& solutions, const std::filesystem::path& claims_tsv,
                                              const std::vector<Claim>& claims, const std::filesystem::path& problems);

// The problem number a solution's file name carries: `L1_019_19_ReLU.py` and `19_ReLU.py` -> 19.
std::optional<int> problem_number_of(const std::string& file_name);

}  // namespace kevo::interop
