// Candidate intake: what a candidate file must be before any other check reads it, and what its
// compiled library must export. A candidate that fails here gets a verdict with its own reason
// (IntakeCode), never an internal error: over the size limit, not UTF-8 text, no or several
// kevo_forward definitions, or a library that does not export kevo_forward.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "util/result.h"

namespace kevo {

enum class IntakeCode {
  TooLarge,         // over IntakeOptions::max_bytes
  NotUtf8,          // invalid UTF-8, or a NUL byte: not source text
  Empty,            // nothing but whitespace
  NoForward,        // no kevo_forward definition (missing, renamed, only declared)
  SeveralForwards,  // more than one kevo_forward definition
  NotExported,      // the compiled library's dynamic symbols lack kevo_forward
};

// "too_large", "not_utf8", "empty", "no_kevo_forward", "several_kevo_forward",
// "kevo_forward_not_exported": the verdict reasons.
const char* to_string(IntakeCode c);

struct IntakeFinding {
  IntakeCode code;
  std::string message;  // says the size and the limit, the byte offset, or the lines
};

struct IntakeOptions {
  size_t max_bytes = size_t{1} << 20;  // 1 MiB: ~20x the largest kernel a model has written for kevo
};

// TooLarge when `bytes` is over the limit: for the file's size before it is read (a 50 GB file is
// refused without reading it), and the first step of check_intake.
std::optional<IntakeFinding> check_size(uint64_t bytes, const IntakeOptions& opts = {});

// The first problem with a candidate's source, or nullopt. Linear in the source size; the size
// limit is checked first, so a huge input costs nothing more.
std::optional<IntakeFinding> check_intake(std::string_view src, const IntakeOptions& opts = {});

// Reads the ELF shared object's dynamic symbol table (.dynsym) and confirms that kevo_forward is
// a defined, exported function. nullopt: it is; a finding (NotExported) when not; an error when
// the file cannot be read or is not a 64-bit ELF shared object (an infrastructure failure: kevo's
// compiler made it).
Result<std::optional<IntakeFinding>> confirm_exports(const std::filesystem::path& so_path);

// The byte offset of the first invalid UTF-8 sequence (or NUL byte), or nullopt when valid.
std::optional<size_t> first_invalid_utf8(std::string_view s);

}  // namespace kevo
