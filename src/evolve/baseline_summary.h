// The baseline's verdict as a run stores it (runs.baseline, and the baseline records of
// baseline_record.h): its outcome, time, GPU, architecture, speed-of-light floor, profile and
// which configs were checked against what. The run's later phases read the parts the prompts use
// back as a verdict. Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include "check/verdict.h"

namespace kevo::evolve {

// The summary of the baseline's verdict `v`; `fake`: judged by a test double.
nlohmann::json baseline_summary(const Verdict& v, bool fake);
// The parts of a summary the task context needs (device, arch, timing, profile), as a verdict.
Verdict verdict_from_summary(const nlohmann::json& j);

}  // namespace kevo::evolve
