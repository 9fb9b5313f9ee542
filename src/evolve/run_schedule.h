// Scheduling a run's proposals (run_state.h): whether another may start under the budgets, and
// what it asks for (a queued repair, else an operator over parents the population selects).
// Internal to evolve/.
#pragma once

#include <cstddef>
#include <string>

#include "evolve/run_state.h"

namespace kevo::evolve {

// Why no new proposal may start now, with `in_flight` started and not recorded (kNone: it may).
store::StopKind blocked(const RunState& s, size_t in_flight);
// The best candidate's speed-of-light fraction (floor / its time); 0 without a best or a floor.
double best_sol_fraction(const RunState& s);
// The next proposal's job: its operator, parents, lineage and prompt.
Job plan_job(RunState& s);
// Queues a repair of `failed` (its `source` and what went wrong) while it has repair rounds left.
void queue_repair(RunState& s, const store::CandidateRow& failed, const std::string& source, std::string feedback);

}  // namespace kevo::evolve
