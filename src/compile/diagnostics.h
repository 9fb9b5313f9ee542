// Compiler output trimmed to what a model can act on: errors first, then warnings, each with its
// line and the source excerpt, paths of the private build directory replaced by the name the model
// knows the file by, duplicates (nvcc reports host and device passes separately) and noise removed.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kevo {

// The file name the compiler sees for the candidate inside its private build directory; any path
// ending in it (and any path under the system temp directory or nvcc's tmpxft_* intermediates) is
// shown as the caller's name instead.
inline constexpr std::string_view kCompileSourceStem = "kevo_src";

std::string trim_diagnostics(std::string_view log, std::string_view shown_name,
                             size_t max_chars = 4000);

}  // namespace kevo
