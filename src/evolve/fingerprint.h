// Source fingerprints: two candidates whose code differs only in comments and whitespace are the
// same program, and a repeat is not compiled or timed again (models often send back their input,
// or the same answer twice from parallel proposals).
#pragma once

#include <string>
#include <string_view>

namespace kevo::evolve {

// The source without comments, with whitespace kept only where it separates two word
// characters (identifiers, numbers), inside string/char literals, and (as one space) in
// preprocessor lines, which keep their line break.
std::string normalize_source(std::string_view src);

// SHA-256 (hex) of normalize_source(src).
std::string source_fingerprint(std::string_view src);

}  // namespace kevo::evolve
