#include "agent/budgets.h"

#include <fmt/format.h>

namespace kevo::agent {

const char* budget_name(Budget b) {
  switch (b) {
    case Budget::kEvaluations: return "evaluations";
    case Budget::kGpuSeconds: return "gpu_seconds";
    case Budget::kWallTime: return "wall_seconds";
    case Budget::kParallel: return "parallel";
    case Budget::kSubmissions: return "submissions";
    case Budget::kCompiles: return "compiles";
  }
  return "unknown";
}

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
