// A pre-check for TOML text before toml++ parses it.
//
// toml++ 3.3 (Debian 12's libtomlplusplus-dev) reaches __builtin_unreachable() when it asks whether
// some non-ASCII characters are whitespace (is_non_ascii_horizontal_whitespace: U+00A1..U+0499,
// most of the U+3000 block, near U+FEFF): undefined behaviour on a one-character malformed file.
// The fuzzers found the three places it asks: outside strings and comments (TOML allows non-ASCII
// characters only inside them, so refusing these loses no valid document), inside a value that
// does not start with a quote (toml++ reads it ahead to a terminator, so quotes there open no
// string), and after a backslash in a """ string (toml++ skips a line-ending backslash's
// whitespace). The last includes valid TOML (`"""\<newline>e-acute"""`): refused too, with its
// own reason.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace kevo {

enum class TomlHazardKind {
  kNonAsciiOutsideStrings,   // a non-ASCII character outside a string or comment
  kNonAsciiAfterBackslash,   // one after a backslash (and its whitespace) in a """ string
};

struct TomlHazard {
  size_t line = 1;    // 1-based
  size_t column = 1;  // 1-based, in characters (UTF-8 code points), as toml++ counts
  TomlHazardKind kind = TomlHazardKind::kNonAsciiOutsideStrings;
};

// Where the first character toml++ must not see is, or nullopt if there is none.
// Errs on the side of refusing: a string or comment is taken to end where TOML's grammar ends it
// at the latest (a one-line string at its line's end, a comment at '\r' or '\n').
std::optional<TomlHazard> find_toml_hazard(std::string_view text);

// The message callers use for a hazard: what is wrong and how to write it instead.
std::string_view describe(TomlHazardKind kind);

}  // namespace kevo
