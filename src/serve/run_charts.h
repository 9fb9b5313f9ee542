// The run page's charts as standalone SVG documents (GET /runs/ID/charts/NAME.svg), drawn by the
// report's code: best.svg (best-so-far speedup against candidates), rates.svg (compile and
// validity rates), and activity.svg (evaluations over time per worker or GPU, activity.h). The
// page shows them as images, so the browser keeps them apart from the page's DOM and script.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "serve/run_cache.h"

namespace kevo::serve {

// nullopt for an unknown name. best.svg and rates.svg are kept until the run changes.
std::optional<std::string> run_chart(const RunData& d, std::string_view name, double now);

}  // namespace kevo::serve
