// An entry's change against its parent as text a person or a model reads: unified-diff lines
// ("-" removed, "+" added, " " context) with a few lines of context around each change.
#pragma once

#include <string>
#include <string_view>

namespace kevo::archive {

// Empty when the two are the same. Changes far apart are separated by "@@ line N @@" heads.
std::string source_diff(std::string_view parent, std::string_view child, int context = 2);

}  // namespace kevo::archive
