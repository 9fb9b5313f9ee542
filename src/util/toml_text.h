// A pre-check for TOML text before toml++ parses it.
//
// toml++ 3.3 (Debian 12's libtomlplusplus-dev) reaches __builtin_unreachable() when it asks whether
// some non-ASCII characters are whitespace (is_non_ascii_horizontal_whitespace: U+00A1..U+0499,
// most of the U+3000 block, near U+FEFF), which it does for any non-ASCII character outside a
// string or a comment: undefined behaviour on a one-character malformed file (the task fuzzer
// found it). TOML allows non-ASCII characters only inside strings and comments, so refusing the
// rest before parsing loses no valid document.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace kevo {

struct TomlTextPos {
  size_t line = 1;    // 1-based
  size_t column = 1;  // 1-based, in characters (UTF-8 code points), as toml++ counts
};

// Where the first non-ASCII byte outside a string or comment is, or nullopt if there is none.
// Errs on the side of refusing: a string or comment is taken to end where TOML's grammar ends it
// at the latest (a one-line string at its line's end, a comment at '\r' or '\n').
std::optional<TomlTextPos> find_non_ascii_outside_strings(std::string_view text);

// The message callers use for such a position.
inline constexpr std::string_view kNonAsciiOutsideStrings =
    "a non-ASCII character outside a string or comment (TOML allows them only there)";

}  // namespace kevo
