// The run's side of the kernel archive (archive/): what a run adds to it when it ends (its
// verified winner and the notable improvements of its search), and the archived examples its
// prompts show when the strategy's info has "archive". Internal to evolve/.
#pragma once

#include <vector>

#include "archive/task_features.h"
#include "evolve/prompts.h"
#include "evolve/run_state.h"

namespace kevo::evolve {

// A new best counts as a notable improvement when it raises the best speedup by this factor.
inline constexpr double kNotableStep = 1.10;

// The task's features as the archive matches them (visible configs only).
archive::TaskFeatures task_features(const Task& task, const TaskContext& ctx);

// The entries this run adds: the held-out winner (kWinner) and each new best that beat the one
// before by kNotableStep (kImprovement, with what held-out verification said of it, if it was
// tried). Stored in one transaction; a failure to store is an event, never the run's failure.
void archive_run(RunState& s, const RunOutcome& out);

// Up to strategy.archive_shown examples for this run's prompts (archive/retrieval.h); none when
// the archive cannot be read (an event says why).
std::vector<ArchiveExampleView> archive_examples(RunState& s);

}  // namespace kevo::evolve
