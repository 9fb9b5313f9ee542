// Pulls what kevo needs out of a model's free-form answer: code blocks, named fields and
// SEARCH/REPLACE edit blocks.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace kevo::llm {

struct CodeBlock {
  std::string lang;  // the fence's info word, lowercased ("cuda", "cpp", "" when unlabeled)
  std::string code;
  bool closed = true;     // false: the fence never closed (an answer cut off by max_tokens)
  bool inferred = false;  // no fence at all: the answer looked like bare source
};

// One "<<<<<<< SEARCH / ======= / >>>>>>> REPLACE" block (Aider's format).
struct EditBlock {
  std::string search;
  std::string replace;
};

struct ParsedAnswer {
  std::string name;     // NAME: / <NAME>…</NAME>
  std::string thought;  // THOUGHT: / RATIONALE: / DESCRIPTION: / <THOUGHT>…</THOUGHT>
  std::vector<CodeBlock> code_blocks;  // blocks holding edit markers are not listed
  std::vector<EditBlock> edits;
  std::vector<std::string> problems;  // malformed edit blocks, described for the model

  // The block that is the candidate: the longest CUDA block, else the longest C++ block,
  // else the longest unlabeled one. Null when there is none.
  const CodeBlock* main_code() const;
};

ParsedAnswer parse_answer(std::string_view text);

// The candidate's full source from an answer that should contain one, or an error worded for
// the model ("no code block found...").
Result<std::string> extract_code(std::string_view text);

}  // namespace kevo::llm
