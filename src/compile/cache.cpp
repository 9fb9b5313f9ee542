#include "compile/cache.h"

#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/fs.h"

namespace kevo {
namespace fs = std::filesystem;

void to_json(nlohmann::json& j, const KernelResources& k) {
  j = {{"function", k.function},
       {"mangled", k.mangled},
       {"arch", k.arch},
       {"registers", k.registers},
       {"barriers", k.barriers},
       {"shared_bytes", k.shared_bytes},
       {"stack_bytes", k.stack_bytes},
       {"spill_store_bytes", k.spill_store_bytes},
       {"spill_load_bytes", k.spill_load_bytes},
       {"const_bytes", k.const_bytes}};
}

void from_json(const nlohmann::json& j, KernelResources& k) {
  k.function = j.value("function", "");
  k.mangled = j.value("mangled", "");
  k.arch = j.value("arch", "");
  k.registers = j.value("registers", 0);
  k.barriers = j.value("barriers", 0);
  k.shared_bytes = j.value("shared_bytes", 0L);
  k.stack_bytes = j.value("stack_bytes", 0L);
  k.spill_store_bytes = j.value("spill_store_bytes", 0L);
  k.spill_load_bytes = j.value("spill_load_bytes", 0L);
  k.const_bytes = j.value("const_bytes", 0L);
}

// so_path and cache_hit describe one lookup, not the entry, so they are not stored.
void to_json(nlohmann::json& j, const CompileResult& r) {
  j = {{"ok", r.ok},
       {"cache_key", r.cache_key},
       {"seconds", r.seconds},
       {"arch_used", r.arch_used},
       {"command", r.command},
       {"diagnostics", r.diagnostics},
       {"log", r.log},
       {"kernels", r.kernels},
       {"timed_out", r.timed_out},
       {"driver", r.driver}};
}

void from_json(const nlohmann::json& j, CompileResult& r) {
  r.ok = j.value("ok", false);
  r.cache_key = j.value("cache_key", "");
  r.seconds = j.value("seconds", 0.0);
  r.arch_used = j.value("arch_used", "");
  r.command = j.value("command", std::vector<std::string>{});
  r.diagnostics = j.value("diagnostics", "");
  r.log = j.value("log", "");
  r.kernels = j.value("kernels", std::vector<KernelResources>{});
  r.timed_out = j.value("timed_out", false);
  r.driver = j.value("driver", "");
}

CompileCache::CompileCache(fs::path root) : root_(std::move(root)) {}

fs::path CompileCache::entry_dir(const std::string& key) const {
  return root_ / key.substr(0, 2) / key;
}

std::optional<CompileResult> CompileCache::lookup(const std::string& key) const {
  fs::path dir = entry_dir(key);
  std::error_code ec;
  if (!fs::exists(dir / "result.json", ec)) return std::nullopt;
  auto text = read_file(dir / "result.json");
  if (!text) return std::nullopt;
  CompileResult r;
  try {
    r = nlohmann::json::parse(*text).get<CompileResult>();
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (r.cache_key != key) return std::nullopt;
  if (r.ok) {
    if (!fs::exists(dir / "kernel.so", ec)) return std::nullopt;
    r.so_path = dir / "kernel.so";
  }
  r.cache_hit = true;
  return r;
}

Result<fs::path> CompileCache::make_build_dir() const {
  fs::path tmp = root_ / "tmp";
  std::error_code ec;
  fs::create_directories(tmp, ec);
  if (ec) return fail("compile cache {}: cannot create: {}", tmp.string(), ec.message());
  std::string templ = (tmp / "kevo-build-XXXXXX").string();
  if (!mkdtemp(templ.data()))
    return fail("compile cache {}: cannot create a build directory: {}", tmp.string(), std::strerror(errno));
  return fs::path(templ);
}

Result<fs::path> CompileCache::commit(const fs::path& build_dir, const std::string& key,
                                      const CompileResult& r, bool replace) const {
  std::error_code ec;
  KEVO_TRY(write_file_atomic(build_dir / "result.json", nlohmann::json(r).dump(1)));
  fs::path final_dir = entry_dir(key);
  fs::create_directories(final_dir.parent_path(), ec);
  if (ec) return fail("compile cache {}: cannot create: {}", final_dir.parent_path().string(), ec.message());
  // rename cannot replace a non-empty directory: move an entry we must replace aside first.
  auto move_aside = [&]() -> Status {
    auto trash = make_build_dir();
    if (!trash) return trash.unexpected();
    std::error_code e;
    fs::rename(final_dir, *trash / "old", e);
    fs::remove_all(*trash, e);
    return {};
  };
  if (fs::exists(final_dir, ec) && (replace || !lookup(key))) KEVO_TRY(move_aside());
  fs::rename(build_dir, final_dir, ec);
  if (ec) {
    // Another compile of the same key stored it first; its entry is equivalent, keep it.
    std::error_code ec2;
    fs::remove_all(build_dir, ec2);
    if (lookup(key)) return final_dir;
    return fail("compile cache {}: cannot store the entry: {}", final_dir.string(), ec.message());
  }
  return final_dir;
}

}  // namespace kevo
