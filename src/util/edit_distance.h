// Levenshtein distance between two short names (commands, options, task names, keys), for the
// "did you mean" of an unknown one. Thread-safety: a pure function.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kevo {

size_t edit_distance(std::string_view a, std::string_view b);

// Of `names`, the one closest to `word` if it is near enough to be a typo of it (at most 2 edits,
// or a third of the word's length); empty otherwise. Ties go to the first in `names`.
std::string closest_name(std::string_view word, const std::vector<std::string>& names);

}  // namespace kevo
