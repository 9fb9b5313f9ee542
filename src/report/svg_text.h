// Room for the charts' text: the width a label takes, estimated from its characters, so a chart
// sizes its margins to its labels and none runs past the viewBox. The reader's font is not known
// when the SVG is written, so the estimate errs wide (a sans-serif's advances, rounded up).
#pragma once

#include <string>
#include <string_view>

namespace kevo::report {

// The estimated width of `text` (plain, not yet escaped) at `font_size`, in user units.
double text_width(std::string_view text, double font_size);

// `text` cut at the end to fit `max_width` at `font_size`, ending in "..." when cut.
std::string fit_text(std::string_view text, double font_size, double max_width);

}  // namespace kevo::report
