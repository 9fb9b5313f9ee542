// Small file helpers whose failures name the file and the cause.
#pragma once

#include <filesystem>
#include <string>

#include "util/result.h"

namespace kevo {

// Errors: ErrorCode::kNotFound when the file is not there, kIo when it cannot be read.
Result<std::string> read_file(const std::filesystem::path& p);
// Writes to a temporary file beside `p` and renames it, so readers never see a half-written file
// (errors: ErrorCode::kIo).
Status write_file_atomic(const std::filesystem::path& p, std::string_view data);
// The per-user cache directory: $KEVO_CACHE_DIR, else $XDG_CACHE_HOME/kevo, else ~/.cache/kevo.
std::filesystem::path cache_dir();
// Where kevo's shipped files live (include/kevo, tasks/): $KEVO_HOME, else the source tree it was
// built from, else next to the executable.
std::filesystem::path kevo_home();

}  // namespace kevo
