// Applies SEARCH/REPLACE edit blocks to a parent source. Each SEARCH text must match exactly one
// place; whitespace differences (trailing spaces, indentation drift, blank lines) are tolerated,
// and a replacement is re-indented by the drift found. All blocks apply or none do: a block that
// does not apply is an error worded to be sent back to the model, never silently skipped.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "llm/parse_answer.h"
#include "util/result.h"

namespace kevo::llm {

Result<std::string> apply_edits(std::string_view source, const std::vector<EditBlock>& edits);

// parse_answer + apply_edits, also reporting malformed blocks and answers without any edit.
Result<std::string> apply_answer_edits(std::string_view source, std::string_view answer);

}  // namespace kevo::llm
