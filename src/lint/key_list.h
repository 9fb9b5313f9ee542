// Lint findings name what they hold for by key ("input 'w'", "output 'y'"). A task imported from
// a large module can have hundreds of such keys with one finding each; key_list writes them as
// one readable phrase: keys of one kind together ("inputs 'a', 'b'"), at most a few names of each
// kind shown and the rest counted ("and 140 more").
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace kevo {

// "input 'a'", "input 'b'", "output 'y'" -> "inputs 'a', 'b'; output 'y'". A key without a
// quoted name is its own kind.
std::string key_list(const std::vector<std::string>& keys, size_t shown_per_kind = 8);

}  // namespace kevo
