// A verdict read back from its JSON (Verdict::to_json): how a verdict computed by a `kevo worker`
// on another host reaches the coordinator through the run database. Everything the engine and the
// reports use comes back: outcome, reason, message, compile (kernels, diagnostics), configs,
// timing (summaries, speedup, outside clock, SOL, PyTorch), flags, device, phases and work.
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include "check/verdict.h"
#include "util/result.h"

namespace kevo {

// The inverse of Verdict::to_json; an error names the field that is missing or of the wrong type.
Result<Verdict> verdict_from_json(const nlohmann::json& j);

}  // namespace kevo
