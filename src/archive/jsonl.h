// The archive as JSON Lines (`kevo archive export` / `import`), so a lab can share what it found
// without sharing its run database. One entry per line, {"kevo_archive": 1, "kind": "winner", ...};
// docs/SUITE.md ("The kernel archive") lists the fields. Reading checks every line before any
// entry is handed back, so a damaged file imports nothing.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/archive_row.h"
#include "util/result.h"

namespace kevo::archive {

inline constexpr int kJsonlVersion = 1;

nlohmann::json entry_json(const store::ArchiveRow& r);
// One line per entry, each ending in '\n'.
std::string to_jsonl(const std::vector<store::ArchiveRow>& rows);

// One entry from its JSON; errors name `where` and the field. The task, the GPU and the source are
// required (an example's effect means nothing without the GPU it was measured on), the speedup
// must be a positive number; the fingerprint is computed here, never read.
Result<store::ArchiveRow> entry_from_json(const nlohmann::json& j, const std::string& where);

// Every entry of a JSONL text (blank lines skipped); the first bad line fails the whole text with
// "FILE line N: why". Each entry's origin becomes "imported from FILE line N" and keeps the one it
// had ("(was: run 12 of /lab/runs.db)").
Result<std::vector<store::ArchiveRow>> parse_jsonl(std::string_view text, const std::string& file);
Result<std::vector<store::ArchiveRow>> read_jsonl(const std::filesystem::path& file);

}  // namespace kevo::archive
