#include "util/toml_text.h"

namespace kevo {
namespace {

enum class Lex { kCode, kComment, kBasic, kLiteral, kMultiBasic, kMultiLiteral };

bool starts(std::string_view text, size_t i, std::string_view what) {
  return text.substr(i, what.size()) == what;
}

// Past a closing ''' or """ plus up to two more quotes: TOML lets a multi-line string end in one
// or two of its own quotes ("""a"""" is `a"`), and reading them as content is the cautious side
// (a quote taken for the start of a new string would hide what follows it).
size_t past_multi_close(std::string_view text, size_t i, char quote) {
  i += 3;
  for (int extra = 0; extra < 2 && i < text.size() && text[i] == quote; ++extra) ++i;
  return i;
}

bool blank(char c) { return c == ' ' || c == '\t'; }
bool newline(char c) { return c == '\n' || c == '\r'; }

// After the backslash at i in a """ string, toml++ skips blanks and, past a newline, every
// blank and newline, asking of each character whether it is whitespace. The index of the first
// character it asks about that is not ASCII whitespace (i + 1 when there was none).
size_t past_backslash_whitespace(std::string_view text, size_t i) {
  size_t j = i + 1;
  while (j < text.size() && blank(text[j])) ++j;
  if (j < text.size() && newline(text[j]))
    while (j < text.size() && (blank(text[j]) || newline(text[j]))) ++j;
  return j;
}

}  // namespace

std::string_view describe(TomlHazardKind kind) {
  switch (kind) {
    case TomlHazardKind::kNonAsciiOutsideStrings:
      return "a non-ASCII character outside a string or comment (TOML allows them only there)";
    case TomlHazardKind::kNonAsciiAfterBackslash:
      return "a non-ASCII character right after a backslash (or a line-ending backslash's "
             "whitespace) in a multi-line string, which toml++ 3.3 misreads; write it as a "
             "\\uXXXX escape";
  }
  return "unknown";
}

std::optional<TomlHazard> find_toml_hazard(std::string_view text) {
  if (starts(text, 0, "\xEF\xBB\xBF")) text.remove_prefix(3);  // a BOM, which toml++ skips
  TomlHazard pos;
  Lex lex = Lex::kCode;
  size_t i = 0;
  auto advance = [&](size_t to) {
    for (; i < to && i < text.size(); ++i) {
      auto byte = static_cast<unsigned char>(text[i]);
      if (byte == '\n') {
        ++pos.line;
        pos.column = 1;
      } else if ((byte & 0xC0) != 0x80) {  // not a UTF-8 continuation byte
        ++pos.column;
      }
    }
  };
  while (i < text.size()) {
    char c = text[i];
    size_t next = i + 1;
    switch (lex) {
      case Lex::kCode:
        if (static_cast<unsigned char>(c) >= 0x80) return pos;
        if (c == '#') lex = Lex::kComment;
        else if (starts(text, i, "\"\"\"")) lex = Lex::kMultiBasic, next = i + 3;
        else if (starts(text, i, "'''")) lex = Lex::kMultiLiteral, next = i + 3;
        else if (c == '"') lex = Lex::kBasic;
        else if (c == '\'') lex = Lex::kLiteral;
        break;
      case Lex::kComment:
        if (c == '\n' || c == '\r') lex = Lex::kCode;
        break;
      case Lex::kBasic:
        if (c == '\\') next = i + 2;
        else if (c == '"' || c == '\n') lex = Lex::kCode;
        break;
      case Lex::kLiteral:
        if (c == '\'' || c == '\n') lex = Lex::kCode;
        break;
      case Lex::kMultiBasic:
        if (c == '\\') {
          size_t j = past_backslash_whitespace(text, i);
          if (j < text.size() && static_cast<unsigned char>(text[j]) >= 0x80) {
            advance(j);
            pos.kind = TomlHazardKind::kNonAsciiAfterBackslash;
            return pos;
          }
          next = j == i + 1 ? i + 2 : j;
        } else if (starts(text, i, "\"\"\"")) lex = Lex::kCode, next = past_multi_close(text, i, '"');
        break;
      case Lex::kMultiLiteral:
        if (starts(text, i, "'''")) lex = Lex::kCode, next = past_multi_close(text, i, '\'');
        break;
    }
    advance(next);
  }
  return std::nullopt;
}

}  // namespace kevo
