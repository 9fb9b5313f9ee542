#include "report/svg_text.h"

#include <cstring>

namespace kevo::report {

namespace {

// An advance in ems: narrow punctuation and letters, wide letters, capitals, the rest; a character
// outside ASCII (CJK among them) as a full em.
double advance(unsigned char c) {
  if (c >= 0x80) return 1.0;
  if (std::strchr(" .,:;'|!()[]ijlftrI", c)) return 0.36;
  if (std::strchr("mwMW@%", c)) return 0.92;
  if ((c >= 'A' && c <= 'Z') || c == '#' || c == '&') return 0.74;
  return 0.62;
}

// UTF-8: a character's continuation bytes take no room of their own.
bool continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

}  // namespace

double text_width(std::string_view text, double font_size) {
  double ems = 0;
  for (unsigned char c : text)
    if (!continuation(c)) ems += advance(c);
  return ems * font_size;
}

std::string fit_text(std::string_view text, double font_size, double max_width) {
  if (text_width(text, font_size) <= max_width) return std::string(text);
  const double room = max_width - text_width("...", font_size);
  size_t end = 0;
  double used = 0;
  while (end < text.size()) {
    size_t next = end + 1;
    while (next < text.size() && continuation(static_cast<unsigned char>(text[next]))) ++next;
    used += advance(static_cast<unsigned char>(text[end])) * font_size;
    if (used > room) break;
    end = next;
  }
  return std::string(text.substr(0, end)) + "...";
}

}  // namespace kevo::report
