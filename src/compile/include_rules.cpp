#include "compile/include_rules.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>

#include "compile/source_text.h"
#include "util/enum_text.h"

namespace kevo {
namespace {

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

// One logical source line (backslash-newlines removed): the offsets of its characters.
struct Logical {
  std::vector<size_t> at;
};

// Reads the logical line starting at `i`; returns the offset just past its newline.
size_t read_logical(std::string_view s, size_t i, Logical& out) {
  out.at.clear();
  const size_t n = s.size();
  while (i < n) {
    if (s[i] == '\\' && i + 1 < n && s[i + 1] == '\n') {
      i += 2;
    } else if (s[i] == '\\' && i + 2 < n && s[i + 1] == '\r' && s[i + 2] == '\n') {
      i += 3;
    } else if (s[i] == '\n') {
      return i + 1;
    } else {
      out.at.push_back(i++);
    }
  }
  return n;
}

// A cursor over a logical line, reading the code view for structure and the keep view for names.
class Line {
 public:
  Line(const Logical& l, std::string_view code, std::string_view keep) : l_(l), code_(code), keep_(keep) {}
  bool done() const { return k_ >= l_.at.size(); }
  char code() const { return done() ? '\0' : code_[l_.at[k_]]; }
  char keep() const { return done() ? '\0' : keep_[l_.at[k_]]; }
  char code_at(size_t d) const { return k_ + d < l_.at.size() ? code_[l_.at[k_ + d]] : '\0'; }
  size_t offset() const { return done() ? (l_.at.empty() ? 0 : l_.at.back()) : l_.at[k_]; }
  void next(size_t d = 1) { k_ += d; }
  void skip_space() {
    while (!done() && space(code())) ++k_;
  }
  std::string ident() {
    std::string s;
    while (!done() && ident_char(code())) s += code(), ++k_;
    return s;
  }
  // The rest of the line as written (comments blanked), trimmed; at most `max` characters.
  std::string rest_kept(size_t max = 200) const {
    std::string s;
    for (size_t k = k_; k < l_.at.size() && s.size() < max; ++k) s += keep_[l_.at[k]];
    return s;
  }
  // The whole directive as written, for the message.
  std::string whole(size_t from, size_t max = 80) const {
    std::string s;
    for (size_t k = from; k < l_.at.size() && s.size() < max; ++k) s += keep_[l_.at[k]];
    size_t b = s.find_first_not_of(" \t\r");
    size_t e = s.find_last_not_of(" \t\r");
    return b == std::string::npos ? "" : s.substr(b, e - b + 1);
  }
  size_t index() const { return k_; }

 private:
  const Logical& l_;
  std::string_view code_, keep_;
  size_t k_ = 0;
};

bool has_word(std::string_view text, std::string_view word) {
  for (size_t p = text.find(word); p != std::string_view::npos; p = text.find(word, p + 1)) {
    bool left = p == 0 || !ident_char(text[p - 1]);
    bool right = p + word.size() >= text.size() || !ident_char(text[p + word.size()]);
    if (left && right) return true;
  }
  return false;
}

// Pragmas that read, name or hide host files.
bool pragma_names_files(std::string_view text) {
  static constexpr std::array<std::string_view, 5> kWords = {"dependency", "system_header", "include",
                                                            "include_alias", "embed"};
  for (auto w : kWords)
    if (has_word(text, w)) return true;
  return false;
}

// `#include`/`#include_next`/`#import`: only `<plain/name.h>`.
void check_include(Line& l, size_t from, std::vector<IncludeHit>& out) {
  l.skip_space();
  const size_t off = l.offset();
  if (l.keep() == '<') {
    l.next();
    std::string name;
    while (!l.done() && l.keep() != '>') name += l.keep(), l.next();
    if (!l.done() && is_plain_header_name(name)) return;
  }
  out.push_back({IncludeRule::HostInclude, off, l.whole(from)});
}

void check_directive(Line& l, std::vector<IncludeHit>& out) {
  l.skip_space();
  const size_t from = l.index();
  const size_t off = l.offset();
  if (l.code() == '#') {
    l.next();
  } else if (l.code() == '%' && l.code_at(1) == ':') {
    l.next(2);
  } else if (l.code() == '?' && l.code_at(1) == '?' && l.code_at(2) == '=') {
    l.next(3);
  } else {
    return;
  }
  l.skip_space();
  if (std::isdigit(static_cast<unsigned char>(l.code()))) {  // a linemarker: # 1 "file"
    out.push_back({IncludeRule::LineDirective, off, l.whole(from)});
    return;
  }
  const std::string d = l.ident();
  if (d == "include" || d == "include_next" || d == "import") {
    check_include(l, from, out);
  } else if (d == "embed") {
    out.push_back({IncludeRule::EmbedFile, off, l.whole(from)});
  } else if (d == "line") {
    out.push_back({IncludeRule::LineDirective, off, l.whole(from)});
  } else if (d == "pragma" && pragma_names_files(l.rest_kept())) {
    out.push_back({IncludeRule::PragmaFile, off, l.whole(from)});
  }
}

// Skips whitespace and backslash-newlines in `s` from `i`.
size_t skip_ws(std::string_view s, size_t i) {
  while (i < s.size() && (std::isspace(static_cast<unsigned char>(s[i])) ||
                          (s[i] == '\\' && i + 1 < s.size() && s[i + 1] == '\n')))
    ++i;
  return i;
}

std::string excerpt(std::string_view keep, size_t b, size_t max = 80) {
  size_t e = keep.find('\n', b);
  if (e == std::string_view::npos) e = keep.size();
  return std::string(keep.substr(b, std::min(e - b, max)));
}

// Operators usable anywhere: __has_include(<x>) / __has_embed(...) / _Pragma("...").
void check_operators(std::string_view code, std::string_view keep, std::vector<IncludeHit>& out) {
  for (size_t i = 0; i < code.size();) {
    if (!ident_char(code[i])) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < code.size() && ident_char(code[j])) ++j;
    std::string_view id = code.substr(i, j - i);
    const size_t at = i;
    i = j;
    if (id == "__has_embed") {
      out.push_back({IncludeRule::EmbedFile, at, excerpt(keep, at)});
    } else if (id == "__has_include" || id == "__has_include_next") {
      size_t p = skip_ws(keep, j);
      if (p < keep.size() && keep[p] == '(') p = skip_ws(keep, p + 1);
      bool ok = false;
      if (p < keep.size() && keep[p] == '<') {
        size_t close = keep.find_first_of(">\n", p + 1);
        ok = close != std::string_view::npos && keep[close] == '>' &&
             is_plain_header_name(keep.substr(p + 1, close - p - 1));
      }
      if (!ok) out.push_back({IncludeRule::HasInclude, at, excerpt(keep, at)});
    } else if (id == "_Pragma") {
      size_t p = skip_ws(keep, j);
      if (p < keep.size() && keep[p] == '(') p = skip_ws(keep, p + 1);
      if (p < keep.size() && (keep[p] == 'L' || keep[p] == 'u' || keep[p] == 'U')) ++p;
      size_t close = p + 1;  // the literal's closing quote, past escaped ones
      while (close < keep.size() && keep[close] != '"' && keep[close] != '\n')
        close += keep[close] == '\\' ? 2 : 1;
      // A pragma built by macros could say anything: only a plain string literal is read.
      if (p >= keep.size() || keep[p] != '"' || close >= keep.size() ||
          pragma_names_files(keep.substr(p + 1, close - p - 1)))
        out.push_back({IncludeRule::PragmaFile, at, excerpt(keep, at)});
    }
  }
}

// Assembler directives that read files: `.incbin "f"`, `.include "f"` (in inline asm strings).
void check_asm_files(std::string_view keep, std::vector<IncludeHit>& out) {
  for (size_t p = keep.find('.'); p != std::string_view::npos; p = keep.find('.', p + 1)) {
    // After an identifier it is a member or a file name ("x.include"), unless that is an escape
    // such as "\t.incbin".
    if (p > 0 && ident_char(keep[p - 1]) && !(p > 1 && keep[p - 2] == '\\')) continue;
    size_t q = p + 1;
    while (q < keep.size() && (keep[q] == ' ' || keep[q] == '\t')) ++q;
    for (std::string_view w : {std::string_view("incbin"), std::string_view("include")}) {
      if (keep.substr(q, w.size()) == w && (q + w.size() >= keep.size() || !ident_char(keep[q + w.size()]))) {
        out.push_back({IncludeRule::EmbedFile, p, excerpt(keep, p)});
        break;
      }
    }
  }
}

}  // namespace

namespace {

constexpr EnumText<IncludeRule> kIncludeRuleTexts[] = {
    {IncludeRule::HostInclude, "host_include"},
    {IncludeRule::EmbedFile, "embed_file"},
    {IncludeRule::LineDirective, "line_directive"},
    {IncludeRule::PragmaFile, "pragma_file"},
    {IncludeRule::HasInclude, "has_include"},
};

}  // namespace

const char* to_string(IncludeRule r) { return enum_text(kIncludeRuleTexts, r); }

bool is_plain_header_name(std::string_view name) {
  if (name.empty() || name.size() > 200) return false;
  size_t b = 0;
  while (b <= name.size()) {
    size_t e = name.find('/', b);
    if (e == std::string_view::npos) e = name.size();
    std::string_view part = name.substr(b, e - b);
    if (part.empty() || part == "." || part == "..") return false;
    for (char c : part)
      if (!ident_char(c) && c != '.' && c != '-' && c != '+') return false;
    b = e + 1;
  }
  return true;
}

std::vector<IncludeHit> find_host_file_access(std::string_view code, std::string_view keep) {
  std::vector<IncludeHit> out;
  Logical l;
  for (size_t i = 0; i < code.size();) {
    i = read_logical(code, i, l);
    Line line(l, code, keep);
    check_directive(line, out);
  }
  check_operators(code, keep, out);
  check_asm_files(keep, out);
  return out;
}

std::vector<IncludeHit> find_host_file_access(std::string_view source) {
  const std::string code = blank_comments_and_strings(source, true);
  const std::string keep = blank_comments_and_strings(source, false);
  return find_host_file_access(code, keep);
}

std::string hit_message(const IncludeHit& h) {
  switch (h.rule) {
    case IncludeRule::HostInclude:
      return fmt::format("{}: include only toolkit and system headers, as #include <name.h> "
                         "(quoted, path and macro-built includes could read host files)", h.what);
    case IncludeRule::EmbedFile: return fmt::format("{}: reads a file into the program", h.what);
    case IncludeRule::LineDirective:
      return fmt::format("{}: renames the source file in the compiler's messages", h.what);
    case IncludeRule::PragmaFile:
      return fmt::format("{}: a pragma that names files, or one built by macros", h.what);
    case IncludeRule::HasInclude:
      return fmt::format("{}: probes for files outside the include path", h.what);
  }
  return h.what;
}

std::string describe_first_hit(std::string_view source, const std::vector<IncludeHit>& hits) {
  if (hits.empty()) return {};
  const IncludeHit& h = *std::min_element(hits.begin(), hits.end(), [](const auto& a, const auto& b) {
    return a.offset < b.offset;
  });
  const auto line = 1 + std::count(source.begin(), source.begin() + std::min(h.offset, source.size()), '\n');
  return fmt::format("line {}: unsafe: {} [{}]", line, hit_message(h), to_string(h.rule));
}

}  // namespace kevo
