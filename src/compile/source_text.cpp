#include "compile/source_text.h"

#include <cctype>

namespace kevo {
namespace {

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Blank [b, e) of s except newlines.
void blank(std::string& s, size_t b, size_t e) {
  for (size_t i = b; i < e && i < s.size(); ++i)
    if (s[i] != '\n') s[i] = ' ';
}

// For `#include <name>` starting at s[i] == '#': the offset of the closing '>' (npos otherwise).
// Bounded scan: a header name is short.
size_t include_header_end(const std::string& s, size_t i) {
  constexpr size_t kMaxScan = 512;
  const size_t end = std::min(s.size(), i + kMaxScan);
  size_t p = i + 1;
  auto skip = [&] {
    while (p < end && std::isspace(static_cast<unsigned char>(s[p])) && s[p] != '\n') ++p;
  };
  skip();
  if (s.compare(p, 7, "include") != 0) return std::string::npos;
  p += 7;
  skip();
  if (p >= end || s[p] != '<') return std::string::npos;
  for (++p; p < end && s[p] != '\n'; ++p)
    if (s[p] == '>') return p;
  return std::string::npos;
}

}  // namespace

std::string blank_comments_and_strings(std::string_view src, bool blank_strings) {
  std::string s(src);
  size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    char c = s[i];
    if (c == '/' && i + 1 < n && s[i + 1] == '/') {
      size_t j = i;
      // A backslash at the end of the line continues a // comment.
      while (j < n && !(s[j] == '\n' && !(j > 0 && s[j - 1] == '\\'))) ++j;
      blank(s, i, j);
      i = j;
    } else if (c == '/' && i + 1 < n && s[i + 1] == '*') {
      size_t j = s.find("*/", i + 2);
      j = j == std::string::npos ? n : j + 2;
      blank(s, i, j);
      i = j;
    } else if (c == '"' && i > 0 && s[i - 1] == 'R' && (i < 2 || !ident_char(s[i - 2]) || s[i - 2] == '8' ||
                                                       s[i - 2] == 'L' || s[i - 2] == 'u' || s[i - 2] == 'U')) {
      // Raw string R"delim( ... )delim".
      size_t paren = s.find('(', i + 1);
      if (paren == std::string::npos) break;
      if (paren - i - 1 > 16) {  // longer than any delimiter C++ allows: not a raw string
        ++i;
        continue;
      }
      std::string close = ")" + s.substr(i + 1, paren - i - 1) + "\"";
      size_t j = s.find(close, paren + 1);
      j = j == std::string::npos ? n : j + close.size();
      if (blank_strings) blank(s, i + 1, j - 1);
      i = j;
    } else if (c == '"' || c == '\'') {
      if (c == '\'' && i > 0 && ident_char(s[i - 1])) {
        // A digit separator (1'000) unless the token before is a prefix (L'x', u8'x').
        size_t b = i;
        while (b > 0 && ident_char(s[b - 1])) --b;
        if (std::isdigit(static_cast<unsigned char>(s[b]))) {
          ++i;
          continue;
        }
      }
      size_t j = i + 1;
      while (j < n && s[j] != c && s[j] != '\n') j += (s[j] == '\\' && j + 1 < n) ? 2 : 1;
      if (blank_strings) blank(s, i + 1, std::min(j, n));
      i = j < n && s[j] == c ? j + 1 : j;
    } else if (c == '#' && blank_strings) {
      // A header name is a literal too: `#include <fstream>` is not a use of fstream.
      size_t close = include_header_end(s, i);
      if (close != std::string::npos) {
        blank(s, s.find('<', i) + 1, close);
        i = close + 1;
      } else {
        ++i;
      }
    } else {
      ++i;
    }
  }
  return s;
}

}  // namespace kevo
