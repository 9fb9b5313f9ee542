// The library search path an ELF executable names for itself (DT_RUNPATH, else DT_RPATH), read
// from its bytes. A runner started from a memfd has no folder of its own: the loader cannot expand
// $ORIGIN there, so the starter resolves those entries against the file's real folder first.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kevo {

// DT_RUNPATH (or DT_RPATH when there is none) of a 64-bit little-endian ELF image; nullopt when
// the bytes are not one or name no path.
std::optional<std::string> elf_runpath(std::string_view image);

// The entries of `runpath` that use $ORIGIN (or ${ORIGIN}), with it replaced by `origin`; the
// others are left to the loader (they mean the same from a memfd).
std::vector<std::string> origin_entries(const std::string& runpath, const std::filesystem::path& origin);

}  // namespace kevo
