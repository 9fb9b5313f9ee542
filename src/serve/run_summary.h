// The figures of a run, as the JSON the API serves and the pages render (docs/SERVE.md lists every
// field): progress against each budget, the result, validity and compile rates, outcomes and
// failure reasons, the best-so-far curve, LLM cost and tokens, per-worker and per-GPU activity,
// and the winner's lineage. Computed from the cached slim rows (run_cache.h); the result and the
// rates come from results/metrics.h, so they match `kevo bench table` and `kevo report`.
#pragma once

#include <nlohmann/json.hpp>

#include "results/metrics.h"
#include "serve/run_cache.h"

namespace kevo::serve {

// Seconds the run has been going: until now while it runs, else until its last update.
double elapsed_s(const store::RunRow& run, double now);

// One run's line in the runs list (GET /api/runs).
nlohmann::json run_brief(const RunData& d, double now);
// The whole summary (GET /api/runs/ID).
nlohmann::json run_summary(const RunData& d, double now);
// bench's view of the run (result, counts, rates), kept until the run changes.
const results::TaskResult& task_result(const RunData& d);

}  // namespace kevo::serve
