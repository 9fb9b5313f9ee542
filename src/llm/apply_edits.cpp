#include "llm/apply_edits.h"

#include <algorithm>
#include <cctype>
#include <optional>

namespace kevo::llm {

namespace {

// Lines with their newline kept, so joining them restores the text byte for byte.
std::vector<std::string> lines_of(std::string_view text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
    out.emplace_back(text.substr(start, end - start));
    start = end;
  }
  return out;
}

std::string_view rstrip(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool blank(std::string_view s) { return rstrip(s).empty(); }

std::string_view indent_of(std::string_view s) {
  size_t n = 0;
  while (n < s.size() && (s[n] == ' ' || s[n] == '\t')) ++n;
  return s.substr(0, n);
}

// Trimmed, with inner runs of whitespace collapsed: "a  =\tb;" and "a = b;" compare equal.
std::string squash(std::string_view s) {
  std::string out;
  bool space = false;
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = !out.empty();
    } else {
      if (space) out += ' ';
      space = false;
      out += c;
    }
  }
  return out;
}

enum class Level { kTrailing, kIndent, kBlankLines };

struct Match {
  size_t first, last;  // source line range [first, last)
  size_t search_first;  // index of the first non-blank SEARCH line, for re-indenting
};

// All places where `search` matches `src` at a tolerance level.
std::vector<Match> find_matches(const std::vector<std::string>& src,
                                const std::vector<std::string>& search, Level level) {
  std::vector<Match> out;
  auto norm = [&](std::string_view s) {
    return level == Level::kTrailing ? std::string(rstrip(s)) : squash(s);
  };
  // The SEARCH lines that take part: leading/trailing blank lines never do; at the blank-line
  // level, none do.
  std::vector<size_t> want;
  for (size_t i = 0; i < search.size(); ++i)
    if (!(blank(search[i]) && (level == Level::kBlankLines || want.empty()))) want.push_back(i);
  while (!want.empty() && blank(search[want.back()])) want.pop_back();
  if (want.empty()) return out;
  std::vector<std::string> w;
  for (size_t i : want) w.push_back(norm(search[i]));

  if (level != Level::kBlankLines) {
    for (size_t s = 0; s + w.size() <= src.size(); ++s) {
      bool ok = true;
      for (size_t k = 0; k < w.size() && ok; ++k) ok = norm(src[s + k]) == w[k];
      if (ok) out.push_back({s, s + w.size(), want.front()});
    }
    return out;
  }
  std::vector<size_t> nb;  // source lines that are not blank
  for (size_t i = 0; i < src.size(); ++i)
    if (!blank(src[i])) nb.push_back(i);
  for (size_t s = 0; s + w.size() <= nb.size(); ++s) {
    bool ok = true;
    for (size_t k = 0; k < w.size() && ok; ++k) ok = norm(src[nb[s + k]]) == w[k];
    if (ok) out.push_back({nb[s], nb[s + w.size() - 1] + 1, want.front()});
  }
  return out;
}

// Moves the replacement by the indentation difference between the SEARCH text and the source:
// the model copied the right lines at the wrong depth, so its new lines are off by as much.
std::string reindent(const std::vector<std::string>& replace, std::string_view from,
                     std::string_view to) {
  std::string out;
  for (const auto& line : replace) {
    std::string_view l = line;
    if (blank(l)) {
      out += l.substr(indent_of(l).size());
    } else if (to.starts_with(from)) {  // deeper in the source: add the difference
      out += std::string(to.substr(from.size())) + line;
    } else if (from.starts_with(to)) {  // shallower: remove up to the difference
      size_t cut = std::min(from.size() - to.size(), indent_of(l).size());
      out += l.substr(cut);
    } else if (l.starts_with(from)) {  // tabs against spaces: swap the prefix
      out += std::string(to) + std::string(l.substr(from.size()));
    } else {
      out += l;
    }
  }
  return out;
}

std::string excerpt(const std::vector<std::string>& lines, size_t first, size_t last) {
  std::string out;
  for (size_t i = first; i < last && i < lines.size(); ++i) out += lines[i];
  if (!out.empty() && out.back() != '\n') out += '\n';
  return out;
}

// Why a SEARCH text matches nowhere, with the closest source region to help the model fix it.
std::string explain_miss(const std::vector<std::string>& src, const std::vector<std::string>& search) {
  std::vector<std::string> s;
  for (const auto& l : search)
    if (!blank(l)) s.push_back(squash(l));
  std::string missing;
  for (const auto& l : search) {
    if (blank(l)) continue;
    bool found = std::any_of(src.begin(), src.end(), [&](const std::string& x) { return squash(x) == squash(l); });
    if (!found) {
      missing = std::string(rstrip(l));
      break;
    }
  }
  size_t best = 0, best_score = 0;
  for (size_t start = 0; start < src.size(); ++start) {
    size_t score = 0;
    for (size_t k = 0; k < s.size() && start + k < src.size(); ++k) score += squash(src[start + k]) == s[k];
    if (score > best_score) {
      best_score = score;
      best = start;
    }
  }
  std::string msg = "the SEARCH text was not found in the parent source.";
  if (!missing.empty())
    msg += fmt::format(" This SEARCH line does not occur in the source at all:\n{}\n", missing);
  if (best_score > 0) {
    size_t end = std::min(src.size(), best + std::max<size_t>(s.size(), 1));
    msg += fmt::format(" The most similar source lines are {}-{}:\n```\n{}```\n", best + 1, end,
                       excerpt(src, best, end));
  }
  msg += " Copy the SEARCH lines exactly from the current source.";
  return msg;
}

}  // namespace

Result<std::string> apply_edits(std::string_view source, const std::vector<EditBlock>& edits) {
  std::string text(source);
  std::vector<std::string> problems;
  for (size_t n = 0; n < edits.size(); ++n) {
    const EditBlock& e = edits[n];
    auto report = [&](std::string why) {
      problems.push_back(fmt::format("Block {} (SEARCH starting `{}`): {}", n + 1,
                                     rstrip(e.search.substr(0, e.search.find('\n'))), why));
    };
    if (rstrip(e.search).empty()) {
      if (rstrip(text).empty()) {
        text = e.replace;
        continue;
      }
      report("the SEARCH section is empty; it must hold the exact lines to replace.");
      continue;
    }
    // Exact text first: it is what the model was asked to produce.
    size_t at = text.find(e.search);
    if (at != std::string::npos) {
      size_t again = text.find(e.search, at + 1);
      if (again == std::string::npos) {
        text.replace(at, e.search.size(), e.replace);
        continue;
      }
    }
    const auto src = lines_of(text);
    const auto search = lines_of(e.search);
    const auto replace = lines_of(e.replace);
    bool done = false;
    for (Level level : {Level::kTrailing, Level::kIndent, Level::kBlankLines}) {
      auto matches = find_matches(src, search, level);
      if (matches.empty()) continue;
      if (matches.size() > 1) {
        std::string where;
        for (size_t k = 0; k < matches.size() && k < 5; ++k)
          where += fmt::format("{}{}", k ? ", " : "", matches[k].first + 1);
        report(fmt::format("the SEARCH text matches {} places (lines {}); add surrounding lines so "
                           "it matches exactly one.",
                           matches.size(), where));
        done = true;
        break;
      }
      const Match& m = matches.front();
      std::string replacement =
          level == Level::kTrailing
              ? excerpt(replace, 0, replace.size())
              : reindent(replace, indent_of(search[m.search_first]), indent_of(src[m.first]));
      if (replace.empty()) replacement.clear();
      // Keep the source's final newline state when the match ends the file.
      if (m.last == src.size() && !src.back().ends_with('\n') && replacement.ends_with('\n'))
        replacement.pop_back();
      std::string rebuilt = excerpt(src, 0, m.first);
      if (m.first > 0 && !rebuilt.ends_with('\n')) rebuilt += '\n';
      rebuilt += replacement;
      for (size_t i = m.last; i < src.size(); ++i) rebuilt += src[i];
      text = std::move(rebuilt);
      done = true;
      break;
    }
    if (!done) {
      if (at != std::string::npos) {
        report("the SEARCH text matches more than one place; add surrounding lines so it matches "
               "exactly one.");
      } else {
        report(explain_miss(src, search));
      }
      continue;
    }
  }
  if (!problems.empty()) {
    std::string msg = fmt::format(
        "{} of {} SEARCH/REPLACE block(s) did not apply, so no edit was made. Blocks apply in "
        "order, each to the source as changed by the blocks before it.\n",
        problems.size(), edits.size());
    for (const auto& p : problems) msg += p + "\n";
    return Unexpected{Error{msg}};
  }
  return text;
}

Result<std::string> apply_answer_edits(std::string_view source, std::string_view answer) {
  ParsedAnswer a = parse_answer(answer);
  if (!a.problems.empty()) {
    std::string msg;
    for (const auto& p : a.problems) msg += p + "\n";
    return Unexpected{Error{msg}};
  }
  if (a.edits.empty())
    return fail("no SEARCH/REPLACE block found in your answer: write each change as\n"
                "<<<<<<< SEARCH\n(exact lines from the current source)\n=======\n(new lines)\n"
                ">>>>>>> REPLACE");
  return apply_edits(source, a.edits);
}

}  // namespace kevo::llm
