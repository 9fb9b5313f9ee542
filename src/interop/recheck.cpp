#include "interop/recheck.h"

#include <fmt/format.h>

#include <chrono>
#include <map>

#include "interop/task_compat.h"
#include "util/fs.h"
#include "util/hash.h"

namespace kevo::interop {
namespace fs = std::filesystem;

namespace {

// The problems imported in this run (or found imported by an earlier one), by problem file.
struct TaskCache {
  std::map<fs::path, Result<Task>> tasks;

  const Result<Task>& get(torch::TorchBridge& b, const fs::path& problem, const RecheckOptions& o) {
    auto it = tasks.find(problem);
    if (it != tasks.end()) return it->second;
    return tasks.emplace(problem, load_or_import(b, problem, o)).first->second;
  }

  static Result<Task> load_or_import(torch::TorchBridge& b, const fs::path& problem, const RecheckOptions& o) {
    const fs::path dir = o.tasks_dir / task_name_from(problem.stem().string());
    std::error_code ec;
    if (fs::exists(dir / "task.toml", ec))
      if (auto t = load_task_with_torch(dir)) return t;
    ImportOptions io = o.import;
    io.out_dir = o.tasks_dir;
    io.overwrite = true;
    auto im = import_kernelbench(b, problem, io);
    if (!im) return im.unexpected();
    return load_task_with_torch(im->dir);
  }
};

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// The solution read by the bridge as text: nullopt when it is a solution, else its row's verdict.
std::optional<SolutionVerdict> solution_problem(torch::TorchBridge& b, const fs::path& solution) {
  auto r = b.request({{"op", "solution_info"}, {"path", fs::absolute(solution).string()}});
  if (r) return std::nullopt;
  const std::string& m = r.error().message;
  const bool bad = m.find(fs::absolute(solution).string()) != std::string::npos;
  return SolutionVerdict{bad ? SolutionOutcome::kBadSolution : SolutionOutcome::kInfraError, first_line(m), {}, {},
                         LooseCheck::kUnknown};
}

SolutionVerdict judge(torch::TorchBridge& b, SolutionEvaluator& ev, TaskCache& cache, const RecheckItem& item,
                      const RecheckOptions& o) {
  if (!item.problem) return {SolutionOutcome::kProblemError, item.problem_error, {}, {}, LooseCheck::kUnknown};
  if (auto bad = solution_problem(b, item.solution)) return *bad;
  const auto& task = cache.get(b, *item.problem, o);
  if (!task)
    return {SolutionOutcome::kProblemError, "the problem does not import: " + first_line(task.error().message), {}, {},
            LooseCheck::kUnknown};
  return ev.evaluate(*task, item.solution);
}

}  // namespace

Result<std::vector<RecheckRow>> recheck(SolutionEvaluator& ev, const RecheckOptions& o, const RecheckProgress& progress) {
  auto claims = read_claims(o.claims);
  if (!claims) return claims.unexpected();
  auto plan = plan_recheck(o.solutions, o.claims, *claims, o.problems);
  if (!plan) return plan.unexpected();
  auto done = read_results(o.results);
  if (!done) return done.unexpected();
  std::map<std::pair<std::string, std::string>, RecheckRow> previous;  // (file, sha256) -> row
  for (auto& r : *done)
    if (r.evaluator == ev.name() && r.verdict.outcome != SolutionOutcome::kInfraError) previous[{r.file, r.sha256}] = r;
  auto b = torch::TorchBridge::start(o.bridge);
  if (!b) return b.unexpected();
  TaskCache cache;
  std::vector<RecheckRow> rows;
  for (size_t i = 0; i < plan->size(); ++i) {
    const RecheckItem& item = (*plan)[i];
    auto bytes = read_file(item.solution);
    RecheckRow row;
    row.file = fs::relative(item.solution, o.solutions).string();
    row.sha256 = bytes ? sha256_hex(*bytes) : "-";
    row.evaluator = ev.name();
    row.problem = item.problem ? item.problem->filename().string() : "-";
    if (item.claim) row.claimed = item.claim->speedup;
    if (auto it = previous.find({row.file, row.sha256}); it != previous.end()) {
      rows.push_back(it->second);
      if (progress) progress(i + 1, plan->size(), rows.back(), true);
      continue;
    }
    if (!b->alive()) {  // a problem that hung or killed the bridge: a fresh one for the next
      auto again = torch::TorchBridge::start(o.bridge);
      if (!again) return again.unexpected();
      *b = std::move(*again);
    }
    const auto t0 = std::chrono::steady_clock::now();
    row.verdict = bytes ? judge(*b, ev, cache, item, o)
                        : SolutionVerdict{SolutionOutcome::kBadSolution, first_line(bytes.error().message), {}, {},
                                          LooseCheck::kUnknown};
    row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    KEVO_TRY(append_result(o.results, row));
    rows.push_back(row);
    if (progress) progress(i + 1, plan->size(), row, false);
  }
  return rows;
}

bool claim_holds(const RecheckRow& r) {
  return r.claimed && r.verdict.outcome == SolutionOutcome::kPass && r.verdict.vs_eager &&
         r.verdict.vs_eager->median >= 0.9 * *r.claimed;
}

RecheckTotals recheck_totals(const std::vector<RecheckRow>& rows) {
  RecheckTotals t;
  std::map<SolutionOutcome, size_t> by;
  for (const auto& r : rows) {
    ++t.files;
    ++by[r.verdict.outcome];
    if (!r.claimed) continue;
    ++t.claims;
    if (claim_holds(r)) ++t.holds;
    else if (r.verdict.outcome == SolutionOutcome::kPass && r.verdict.vs_eager) ++t.passed_below_claim;
    if (r.verdict.outcome != SolutionOutcome::kPass && r.verdict.outcome != SolutionOutcome::kNeedsGpu &&
        r.verdict.kernelbench_allclose == LooseCheck::kPass)
      ++t.loose_only;
  }
  t.by_outcome.assign(by.begin(), by.end());
  return t;
}

}  // namespace kevo::interop
