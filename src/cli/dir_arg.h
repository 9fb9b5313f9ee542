// An output folder a command is given (`kevo export -o DIR`, `--torch DIR`, `kevo export-torch ...
// DIR`), as its messages name it: "ext/" and "ext" are one folder, shown once as "ext", so a file
// in it reads "ext/kernel.cu", never "ext//kernel.cu".
#pragma once

#include <filesystem>
#include <string>

namespace kevo::cli {

inline std::string clean_dir(const std::string& dir) {
  std::filesystem::path p = std::filesystem::path(dir).lexically_normal();
  if (p.filename().empty() && p.has_parent_path() && p != p.root_path()) p = p.parent_path();
  return p.string();
}

}  // namespace kevo::cli
