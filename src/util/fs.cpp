#include "util/fs.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#ifndef KEVO_SOURCE_DIR
#define KEVO_SOURCE_DIR ""
#endif

namespace kevo {
namespace fs = std::filesystem;

Result<std::string> read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) {
    const int e = errno;
    return fail(e == ENOENT || e == ENOTDIR ? ErrorCode::kNotFound : ErrorCode::kIo, "{}: cannot open: {}",
                p.string(), std::strerror(e));
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return fail(ErrorCode::kIo, "{}: read error", p.string());
  return ss.str();
}

Status write_file_atomic(const fs::path& p, std::string_view data) {
  std::error_code ec;
  if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
  // Unique per writer, threads of one process included: two writers of one path must not share
  // (and rename away) each other's temporary file.
  static std::atomic<uint64_t> seq{0};
  fs::path tmp = p;
  tmp += fmt::format(".tmp.{}.{}", getpid(), seq.fetch_add(1));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return fail(ErrorCode::kIo, "{}: cannot write: {}", tmp.string(), std::strerror(errno));
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    out.flush();
    if (!out) {
      fs::remove(tmp, ec);
      return fail(ErrorCode::kIo, "{}: write failed (disk full?): {}", p.string(), std::strerror(errno));
    }
  }
  fs::rename(tmp, p, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return fail(ErrorCode::kIo, "{}: cannot rename into place: {}", p.string(), ec.message());
  }
  return {};
}

fs::path cache_dir() {
  if (const char* d = getenv("KEVO_CACHE_DIR"); d && *d) return d;
  if (const char* d = getenv("XDG_CACHE_HOME"); d && *d) return fs::path(d) / "kevo";
  if (const char* h = getenv("HOME"); h && *h) return fs::path(h) / ".cache" / "kevo";
  return fs::temp_directory_path() / "kevo-cache";
}

fs::path kevo_home() {
  if (const char* d = getenv("KEVO_HOME"); d && *d) return d;
  std::error_code ec;
  fs::path src = KEVO_SOURCE_DIR;
  if (!src.empty() && fs::exists(src / "include" / "kevo" / "kernel.h", ec)) return src;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (fs::path d = exe.parent_path(); !d.empty() && d != d.root_path(); d = d.parent_path())
      if (fs::exists(d / "include" / "kevo" / "kernel.h", ec)) return d;
  }
  return fs::current_path(ec);
}

}  // namespace kevo
