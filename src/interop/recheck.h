// `kevo recheck` (docs/KERNELBENCH.md): KernelBench solutions with the speedups their authors
// claim, each checked by kevo against its problem imported as a task. Per solution: the file is
// read as text by the bridge (a Python module with a class ModelNew; nothing of it runs in the
// bridge, which holds the oracle), its problem is imported once into the tasks folder (reused on
// later runs), and the evaluator judges it (solution_evaluator.h). Results go to the results file
// as each is done (recheck_results.h); a rerun skips the solutions already done.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "interop/import.h"
#include "interop/recheck_plan.h"
#include "interop/recheck_results.h"
#include "interop/solution_evaluator.h"
#include "torch/bridge.h"

namespace kevo::interop {

struct RecheckOptions {
  std::filesystem::path solutions, claims, problems;
  torch::BridgeOptions bridge;      // the bridge recheck starts (and restarts when one dies)
  std::filesystem::path results;    // the results file (TSV)
  std::filesystem::path tasks_dir;  // imported problems, one task folder each
  ImportOptions import;             // how problems are imported (out_dir is tasks_dir)
};

// Called after each solution: its index (from 1), the count, its row, and whether the row was
// taken from the results file instead of checked now.
using RecheckProgress = std::function<void(size_t, size_t, const RecheckRow&, bool reused)>;

// The rows of every solution, in plan order. Errors: the inputs cannot be read (a bad claims TSV,
// a missing folder, an unreadable results file) or the results file cannot be written; a bad
// solution or problem is a row, not an error.
// A row whose outcome is infra_error is checked again on the next run. No Python with torch is an
// error with ErrorCode::kNoTorch.
Result<std::vector<RecheckRow>> recheck(SolutionEvaluator& evaluator, const RecheckOptions& opts,
                                        const RecheckProgress& progress);

// A claim holds when kevo passes the solution and its speedup over eager reaches 90% of the claim.
bool claim_holds(const RecheckRow& row);

struct RecheckTotals {
  size_t files = 0, claims = 0, holds = 0, passed_below_claim = 0, loose_only = 0;
  std::vector<std::pair<SolutionOutcome, size_t>> by_outcome;  // outcomes present, in enum order
};
RecheckTotals recheck_totals(const std::vector<RecheckRow>& rows);

// The table (Markdown): one row per solution, then the totals.
std::string recheck_table(const std::vector<RecheckRow>& rows);

}  // namespace kevo::interop
