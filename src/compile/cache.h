// The content-addressed compile cache: cache_dir/compile/<key[0:2]>/<key>/{kernel.so, result.json}.
// An entry is built in a private directory beside the final one and renamed into place, so
// concurrent compiles of the same source (threads or processes) never see a half-written entry.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "compile/nvcc.h"
#include "util/result.h"

namespace kevo {

void to_json(nlohmann::json& j, const KernelResources& k);
void from_json(const nlohmann::json& j, KernelResources& k);
void to_json(nlohmann::json& j, const CompileResult& r);
void from_json(const nlohmann::json& j, CompileResult& r);

class CompileCache {
 public:
  explicit CompileCache(std::filesystem::path root);  // root = cache_dir/compile

  std::filesystem::path entry_dir(const std::string& key) const;
  // The stored result, or nullopt when the entry is missing or incomplete (then it is rebuilt).
  std::optional<CompileResult> lookup(const std::string& key) const;
  // A fresh private build directory under the cache root (same file system, so rename works).
  Result<std::filesystem::path> make_build_dir() const;
  // Writes result.json into build_dir and moves build_dir into place as the entry for `key`. If
  // another compile stored the entry first, theirs is kept unless `replace` (use_cache=false).
  // Returns the final entry directory.
  Result<std::filesystem::path> commit(const std::filesystem::path& build_dir, const std::string& key,
                                       const CompileResult& r, bool replace) const;

 private:
  std::filesystem::path root_;
};

}  // namespace kevo
