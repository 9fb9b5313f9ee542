// An imported task's FLOPs (docs/INTEROP.md, "kevo import kernelbench", step 5): the counted
// records at the original sizes, at each size's probe and at every config, fitted into one
// expression of the dims (flops.h). An expression with floor divisions (pooling and strides) is
// fitted again with more samples (each size inside a floor moved by 1, 2 and 3, every size by 35),
// so that a floor form that only happens to agree at the few values the configs hold is not kept.
#pragma once

#include "interop/config_search.h"
#include "interop/import_probe.h"

namespace kevo::interop {

// Sets p.flops, or adds a note saying why the FLOPs were not derived. `probe` loads the reference
// at other sizes (shapes only) for the extra samples.
void derive_task_flops(ProblemShape& p, const ConfigProbe& main, const ValidateConfig& probe);

}  // namespace kevo::interop
