#include "store/archive_row.h"

#include "util/enum_text.h"

namespace kevo::store {

namespace {

// Stored in the run database and in exported JSONL: a value's text never changes.
constexpr EnumText<ArchiveKind> kArchiveKindTexts[] = {
    {ArchiveKind::kWinner, "winner"},
    {ArchiveKind::kImprovement, "improvement"},
};

constexpr EnumText<HeldOut> kHeldOutTexts[] = {
    {HeldOut::kPassed, "passed"},
    {HeldOut::kFailed, "failed"},
    {HeldOut::kNotChecked, "not_checked"},
};

}  // namespace

const char* to_string(ArchiveKind k) { return enum_text(kArchiveKindTexts, k); }
std::optional<ArchiveKind> parse_archive_kind(std::string_view text) { return enum_parse(kArchiveKindTexts, text); }
const char* to_string(HeldOut h) { return enum_text(kHeldOutTexts, h); }
std::optional<HeldOut> parse_held_out(std::string_view text) { return enum_parse(kHeldOutTexts, text); }

}  // namespace kevo::store
