// Views of a candidate's source that keep every offset (and so every line number) of the original:
// comments, and optionally string, character and header-name literals, replaced by spaces. The
// static checks and the include rules read these instead of the raw text.
#pragma once

#include <string>
#include <string_view>

namespace kevo {

// The source with comments (and, if blank_strings, string and character literals and the names in
// `#include <...>`) replaced by spaces, newlines kept. Linear in the source size.
std::string blank_comments_and_strings(std::string_view source, bool blank_strings);

}  // namespace kevo
