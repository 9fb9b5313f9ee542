#include "evolve/fingerprint.h"

#include <cctype>

#include "evolve/candidate_evaluator.h"
#include "util/hash.h"

namespace kevo::evolve {

namespace {
bool word(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
}  // namespace

std::string normalize_source(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  bool pending_space = false;  // whitespace seen since the last emitted character
  bool in_directive = false;   // a preprocessor line: its end matters
  bool line_start = true;      // only whitespace since the last line break
  auto emit = [&](char c) {
    if (pending_space && !out.empty() && word(out.back()) && word(c)) out += ' ';
    pending_space = false;
    out += c;
  };
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c == '/' && i + 1 < s.size() && s[i + 1] == '/') {
      while (i < s.size() && s[i] != '\n') ++i;
      continue;
    }
    if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') {
      size_t e = s.find("*/", i + 2);
      i = e == std::string_view::npos ? s.size() : e + 2;
      pending_space = true;
      continue;
    }
    if (c == '"' || c == '\'') {  // literals verbatim, escapes included
      line_start = false;
      emit(c);
      ++i;
      while (i < s.size() && s[i] != c && s[i] != '\n') {
        if (s[i] == '\\' && i + 1 < s.size()) out += s[i++];
        out += s[i++];
      }
      if (i < s.size() && s[i] == c) out += s[i++];
      continue;
    }
    if (c == '\n') {
      line_start = true;
      if (in_directive && !(i > 0 && s[i - 1] == '\\')) {
        out += '\n';
        pending_space = false;
        in_directive = false;
      } else {
        pending_space = true;
      }
      ++i;
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c))) {
      // In a directive a space can matter (`#define F (x)` is not `#define F(x)`): keep one.
      if (in_directive && !out.empty() && out.back() != ' ' && out.back() != '\n') out += ' ';
      else pending_space = true;
      ++i;
      continue;
    }
    if (c == '#' && line_start) {
      if (!out.empty() && out.back() != '\n') out += '\n';
      pending_space = false;
      in_directive = true;
    }
    line_start = false;
    emit(c);
    ++i;
  }
  return out;
}

std::string source_fingerprint(std::string_view src) { return sha256_hex(normalize_source(src)); }

std::string CandidateEvaluator::fingerprint(const std::string& source) const { return source_fingerprint(source); }

}  // namespace kevo::evolve
