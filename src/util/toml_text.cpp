#include "util/toml_text.h"

#include <vector>

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

bool bare_key(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

// What toml++ makes of a quote outside strings and comments. A value that does not start with a
// quote (a number, a date, a boolean) is read ahead up to a terminator (whitespace, ']', '}', ',',
// '#'), each character asked whether it is whitespace: in `a = 8"""2<U+00A1>` or `a = 8\"<U+00A1>`
// the quote opens nothing (the fuzzer's third finding). So the scanner follows where a value may
// start (after '=', in an array) and reads such a value the same way; a key ends at its first
// character that is not a bare key's.
class CodeContext {
 public:
  bool quote_opens_string() const { return token_ != Token::kValue; }
  void after_string() { token_ = Token::kNone; }
  void see(char c) {
    const bool space = c == ' ' || c == '\t' || c == '\r' || c == '\n';
    if (token_ == Token::kValue && !(space || c == ']' || c == '}' || c == ',')) return;
    if (token_ == Token::kKey && bare_key(c)) return;
    token_ = Token::kNone;
    if (space) {
      if (c == '\n' && open_.empty()) value_next_ = false;
    } else if (c == '=') {
      value_next_ = true;
    } else if (c == '[' || c == '{') {
      if (value_next_) open_.push_back(c), value_next_ = c == '[';  // in '{', keys come first
    } else if (c == ',' || c == ']' || c == '}') {
      if (c != ',' && !open_.empty()) open_.pop_back();
      value_next_ = !open_.empty() && open_.back() == '[';
    } else if (c != '.') {
      token_ = value_next_ ? Token::kValue : bare_key(c) ? Token::kKey : Token::kNone;
    }
  }

 private:
  enum class Token { kNone, kKey, kValue };
  Token token_ = Token::kNone;
  bool value_next_ = false;  // a token starting now is a value
  std::vector<char> open_;   // the arrays and inline tables open inside the current value
};

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
  CodeContext code;
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
        else if ((c != '"' && c != '\'') || !code.quote_opens_string()) code.see(c);
        else if (starts(text, i, "\"\"\"")) lex = Lex::kMultiBasic, next = i + 3;
        else if (starts(text, i, "'''")) lex = Lex::kMultiLiteral, next = i + 3;
        else lex = c == '"' ? Lex::kBasic : Lex::kLiteral;
        break;
      case Lex::kComment:
        if (c == '\n' || c == '\r') lex = Lex::kCode, code.see(c);
        break;
      case Lex::kBasic:
        if (c == '\\') next = i + 2;
        else if (c == '"') lex = Lex::kCode, code.after_string();
        else if (c == '\n') lex = Lex::kCode, code.see(c);
        break;
      case Lex::kLiteral:
        if (c == '\'') lex = Lex::kCode, code.after_string();
        else if (c == '\n') lex = Lex::kCode, code.see(c);
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
        } else if (starts(text, i, "\"\"\"")) {
          lex = Lex::kCode, next = past_multi_close(text, i, '"');
          code.after_string();
        }
        break;
      case Lex::kMultiLiteral:
        if (starts(text, i, "'''")) {
          lex = Lex::kCode, next = past_multi_close(text, i, '\'');
          code.after_string();
        }
        break;
    }
    advance(next);
  }
  return std::nullopt;
}

}  // namespace kevo
