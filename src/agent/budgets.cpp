#include "agent/budgets.h"

#include <fmt/format.h>

#include "util/enum_text.h"

namespace kevo::agent {

namespace {

// The budgets' names, as tool errors and a run's configuration show them.
constexpr EnumText<Budget> kBudgetTexts[] = {
    {Budget::kEvaluations, "evaluations"}, {Budget::kGpuSeconds, "gpu_seconds"},
    {Budget::kWallTime, "wall_seconds"},   {Budget::kParallel, "parallel"},
    {Budget::kSubmissions, "submissions"}, {Budget::kCompiles, "compiles"},
};

}  // namespace

const char* budget_name(Budget b) { return enum_text(kBudgetTexts, b, "unknown"); }

nlohmann::json SessionBudgets::to_json() const {
  return {{"evaluations", evaluations}, {"gpu_seconds", gpu_seconds}, {"wall_seconds", wall_seconds},
          {"parallel", parallel},       {"submissions", submissions}, {"compiles", compiles},
          {"source_bytes", source_bytes}};
}

std::optional<Budget> over_budget(const SessionBudgets& b, const Spent& s, CallKind k) {
  if (s.wall_seconds >= b.wall_seconds) return Budget::kWallTime;
  if (k.compile && s.compiles >= b.compiles) return Budget::kCompiles;
  if (!k.needs_gpu) return std::nullopt;
  if (k.submission && s.submissions >= b.submissions) return Budget::kSubmissions;
  if (!k.submission && s.evaluations >= b.evaluations) return Budget::kEvaluations;
  if (s.gpu_seconds >= b.gpu_seconds) return Budget::kGpuSeconds;
  if (s.in_flight >= b.parallel) return Budget::kParallel;
  return std::nullopt;
}

std::string budget_message(Budget which, const SessionBudgets& b, const Spent& s) {
  switch (which) {
    case Budget::kEvaluations:
      return fmt::format("budget: evaluations spent ({} of {}); the session's attempts stay recorded; submit one",
                         s.evaluations, b.evaluations);
    case Budget::kGpuSeconds:
      return fmt::format("budget: GPU time spent ({:.0f} s of {:.0f} s); submit one of the attempts", s.gpu_seconds,
                         b.gpu_seconds);
    case Budget::kWallTime:
      return fmt::format("budget: the session's wall time is over ({:.0f} s of {:.0f} s)", s.wall_seconds,
                         b.wall_seconds);
    case Budget::kParallel:
      return fmt::format("budget: {} evaluation(s) at once, and {} running; wait for its answer", b.parallel,
                         s.in_flight);
    case Budget::kSubmissions:
      return fmt::format("budget: submissions spent ({} of {})", s.submissions, b.submissions);
    case Budget::kCompiles:
      return fmt::format("budget: compiles spent ({} of {})", s.compiles, b.compiles);
  }
  return "budget exceeded";
}

}  // namespace kevo::agent
