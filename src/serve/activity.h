// Who evaluated what, and how busy they were. Workers come from the run's evaluation jobs (the
// queue: `kevo worker` names itself HOST/gpuN, one per GPU); GPUs from the candidates' verdicts
// (the device each was evaluated on), so a run evaluated in-process has GPUs but no workers.
// Utilization is evaluation seconds over the run's wall time: the evaluators' occupancy, not the
// GPU's own (NVML) utilization, which counts only the time kernels run.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "serve/run_cache.h"

namespace kevo::serve {

// [{worker, jobs, done, failed, in_flight, retries, busy_s, utilization, last_at}], by name.
nlohmann::json workers_json(const RunData& d, double now);
// [{device, uuid, candidates, passed, eval_s, utilization, last_at}], by name.
nlohmann::json gpus_json(const RunData& d, double now);
// One row per worker (or per GPU when there are no jobs), completed evaluations binned over the
// run's time: a darker cell, more evaluations. Inline SVG, labels escaped.
std::string activity_svg(const RunData& d, double now);
// A small horizontal bar for a share in [0, 1], as inline SVG (CSP-safe: no style attribute).
std::string share_bar_svg(double share);

}  // namespace kevo::serve
