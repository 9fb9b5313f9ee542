#include "llm/parse_answer.h"

#include <algorithm>
#include <cctype>
#include <optional>

namespace kevo::llm {

namespace {

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(start, nl - start);
    if (line.ends_with('\r')) line.remove_suffix(1);
    lines.push_back(line);
    start = nl + 1;
  }
  return lines;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

struct Fence {
  char ch;
  size_t len;
  std::string info;
};

// A fence line: up to 3 spaces, then 3+ backticks or tildes, then an optional info string.
std::optional<Fence> open_fence(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && i < 3 && line[i] == ' ') ++i;
  if (i >= line.size() || (line[i] != '`' && line[i] != '~')) return std::nullopt;
  char ch = line[i];
  size_t n = 0;
  while (i + n < line.size() && line[i + n] == ch) ++n;
  if (n < 3) return std::nullopt;
  std::string_view info = trim(line.substr(i + n));
  if (ch == '`' && info.find('`') != std::string_view::npos) return std::nullopt;
  // The first word names the language: "cuda title=kernel.cu" is cuda.
  info = info.substr(0, info.find_first_of(" \t{"));
  return Fence{ch, n, lower(info)};
}

bool closes(std::string_view line, const Fence& f) {
  std::string_view t = trim(line);
  return t.size() >= f.len && std::all_of(t.begin(), t.end(), [&](char c) { return c == f.ch; });
}

bool is_marker(std::string_view line, char ch, std::string_view word) {
  std::string_view t = trim(line);
  size_t n = 0;
  while (n < t.size() && t[n] == ch) ++n;
  if (n < 5 || n > 9) return false;
  return trim(t.substr(n)) == word;
}

bool is_search(std::string_view l) { return is_marker(l, '<', "SEARCH"); }
bool is_divider(std::string_view l) { return is_marker(l, '=', ""); }
bool is_replace(std::string_view l) { return is_marker(l, '>', "REPLACE"); }

std::string join(const std::vector<std::string_view>& lines, size_t from, size_t to) {
  std::string out;
  for (size_t i = from; i < to; ++i) {
    out += lines[i];
    out += '\n';
  }
  return out;
}

int lang_rank(const std::string& lang) {
  if (lang == "cuda" || lang == "cu" || lang == "cuh") return 3;
  if (lang == "cpp" || lang == "c++" || lang == "cc" || lang == "cxx" || lang == "c" ||
      lang == "hpp" || lang == "h")
    return 2;
  if (lang.empty()) return 1;
  return 0;  // python, bash, text...: never the candidate
}

// Strips markdown decoration around a field value: **bold**, `code`, quotes.
std::string clean_value(std::string_view v) {
  auto deco = [](char c) { return c == '*' || c == '`' || c == '"' || c == '\''; };
  for (size_t before = v.size() + 1; v.size() != before;) {
    before = v.size();
    v = trim(v);
    while (!v.empty() && deco(v.front())) v.remove_prefix(1);
    while (!v.empty() && deco(v.back())) v.remove_suffix(1);
  }
  return std::string(v);
}

// "Name: x", "**Name:** x", "## Name: x", "- Thought: x" → ("name", "x").
std::optional<std::pair<std::string, std::string>> field_line(std::string_view line) {
  std::string_view t = trim(line);
  while (!t.empty() && (t.front() == '#' || t.front() == '*' || t.front() == '-' || t.front() == '>' ||
                        t.front() == ' '))
    t.remove_prefix(1);
  size_t colon = t.find(':');
  if (colon == std::string_view::npos || colon > 24) return std::nullopt;
  std::string key = lower(trim(t.substr(0, colon)));
  while (!key.empty() && (key.back() == '*' || key.back() == ' ')) key.pop_back();
  std::string_view rest = t.substr(colon + 1);
  static const std::pair<const char*, const char*> kKeys[] = {
      {"name", "name"},           {"kernel name", "name"},  {"thought", "thought"},
      {"thoughts", "thought"},    {"rationale", "thought"}, {"reasoning", "thought"},
      {"description", "thought"}, {"explanation", "thought"}};
  for (const auto& [k, field] : kKeys)
    if (key == k) return std::make_pair(std::string(field), clean_value(rest));
  return std::nullopt;
}

// <NAME>…</NAME> anywhere outside code, case-insensitive.
std::optional<std::string> tag_value(std::string_view text, std::string_view tag) {
  std::string low = lower(text);
  std::string open = "<" + std::string(tag) + ">", close = "</" + std::string(tag) + ">";
  size_t a = low.find(open);
  if (a == std::string::npos) return std::nullopt;
  size_t b = low.find(close, a + open.size());
  if (b == std::string::npos) return std::nullopt;
  return clean_value(text.substr(a + open.size(), b - a - open.size()));
}

}  // namespace

const CodeBlock* ParsedAnswer::main_code() const {
  const CodeBlock* best = nullptr;
  for (const auto& b : code_blocks) {
    if (lang_rank(b.lang) == 0) continue;
    if (!best || lang_rank(b.lang) > lang_rank(best->lang) ||
        (lang_rank(b.lang) == lang_rank(best->lang) && b.code.size() > best->code.size()))
      best = &b;
  }
  return best;
}

ParsedAnswer parse_answer(std::string_view text) {
  ParsedAnswer out;
  const auto lines = split_lines(text);
  std::string prose;  // the answer outside code, for field lookup
  size_t skip_close = lines.size();  // closing fence of a block that held edit blocks
  for (size_t i = 0; i < lines.size();) {
    if (i == skip_close) {
      ++i;
      continue;
    }
    if (is_search(lines[i])) {
      // An edit block, fenced or not; its lines are not prose and not a code block.
      size_t div = i + 1;
      while (div < lines.size() && !is_divider(lines[div]) && !is_search(lines[div])) ++div;
      size_t end = div + 1;
      while (end < lines.size() && !is_replace(lines[end]) && !is_search(lines[end])) ++end;
      if (div >= lines.size() || !is_divider(lines[div]) || end >= lines.size() ||
          !is_replace(lines[end])) {
        out.problems.push_back(fmt::format(
            "edit block {} is malformed: a block is `<<<<<<< SEARCH`, the exact lines to find, "
            "`=======`, the new lines, `>>>>>>> REPLACE`, each marker on its own line",
            out.edits.size() + out.problems.size() + 1));
        i = std::min(std::max(div, i + 1), lines.size());
        continue;
      }
      out.edits.push_back({join(lines, i + 1, div), join(lines, div + 1, end)});
      i = end + 1;
      continue;
    }
    if (auto f = open_fence(lines[i])) {
      size_t j = i + 1;
      bool has_edit = false;
      while (j < lines.size() && !closes(lines[j], *f)) {
        has_edit = has_edit || is_search(lines[j]);
        ++j;
      }
      if (has_edit) {
        skip_close = j;
        ++i;  // step inside: the edit blocks are parsed line by line above
        continue;
      }
      CodeBlock b{f->info, join(lines, i + 1, std::min(j, lines.size())), j < lines.size(), false};
      out.code_blocks.push_back(std::move(b));
      i = j + 1;
      continue;
    }
    prose += lines[i];
    prose += '\n';
    ++i;
  }

  for (const char* tag : {"name"})
    if (auto v = tag_value(prose, tag)) out.name = *v;
  for (const char* tag : {"thought", "rationale", "description"})
    if (out.thought.empty())
      if (auto v = tag_value(prose, tag)) out.thought = *v;
  const auto plines = split_lines(prose);
  for (size_t i = 0; i < plines.size(); ++i) {
    auto f = field_line(plines[i]);
    if (!f) continue;
    std::string value = f->second;
    // A thought may continue over the following lines until a blank line or another field.
    if (f->first == "thought")
      for (size_t j = i + 1; j < plines.size() && !trim(plines[j]).empty() && !field_line(plines[j]); ++j)
        value += (value.empty() ? "" : " ") + std::string(trim(plines[j]));
    std::string& slot = f->first == "name" ? out.name : out.thought;
    if (slot.empty()) slot = value;
  }

  // No fence at all, but plainly CUDA source: take it from its first directive or kernel.
  if (out.code_blocks.empty() && out.edits.empty() && text.find("__global__") != std::string_view::npos) {
    size_t first = lines.size(), last = 0;
    for (size_t i = 0; i < lines.size(); ++i) {
      std::string_view t = trim(lines[i]);
      bool code_start = t.starts_with("#include") || t.starts_with("#define") ||
                        t.starts_with("template") || t.starts_with("__global__") ||
                        t.starts_with("extern \"C\"");
      if (first == lines.size() && code_start) first = i;
      if (first != lines.size() && !lines[i].empty() && (lines[i][0] == '}' || t == "};")) last = i;
    }
    if (first < lines.size() && last >= first)
      out.code_blocks.push_back({"cuda", join(lines, first, last + 1), true, true});
  }
  return out;
}

Result<std::string> extract_code(std::string_view text) {
  ParsedAnswer a = parse_answer(text);
  const CodeBlock* b = a.main_code();
  if (!b)
    return fail("no code block found in your answer: put the complete kernel source in one "
                "```cuda fenced block");
  if (!b->closed)
    return fail("the code block is not closed (the answer was probably cut off): send the "
                "complete source in one ```cuda block ending with ```");
  return b->code;
}

}  // namespace kevo::llm
