// What one agent session may spend, enforced by the server whatever the agent does: a tool call
// over a budget is answered with a tool error that names the budget, and nothing runs.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kevo::agent {

enum class Budget {
  kEvaluations,  // evaluate and profile calls (each runs the checker on the GPU)
  kGpuSeconds,   // wall seconds the session's evaluations held the evaluator
  kWallTime,     // seconds since the session started
  kParallel,     // evaluations running or waiting at once
  kSubmissions,  // submit calls (each a held-out verification)
  kCompiles,     // compile calls (CPU only, but not free)
};
const char* budget_name(Budget b);  // "evaluations", "gpu_seconds", ...

struct SessionBudgets {
  int evaluations = 50;
  double gpu_seconds = 1800;
  double wall_seconds = 3600;
  int parallel = 1;
  int submissions = 3;
  int compiles = 200;
  size_t source_bytes = 256u << 10;  // a larger source is refused before anything runs

  nlohmann::json to_json() const;
};

// What a session has spent so far.
struct Spent {
  int evaluations = 0, in_flight = 0, submissions = 0, compiles = 0;
  double gpu_seconds = 0, wall_seconds = 0;
};

// The first budget that one more call of this kind would exceed, or nullopt. `needs_gpu`:
// evaluate/profile/submit; `submission`: submit; `compile`: compile.
struct CallKind {
  bool needs_gpu = false, submission = false, compile = false;
};
std::optional<Budget> over_budget(const SessionBudgets& b, const Spent& s, CallKind k);

// "budget: evaluations spent (50 of 50); the session's attempts stay recorded"
std::string budget_message(Budget which, const SessionBudgets& b, const Spent& s);

}  // namespace kevo::agent
