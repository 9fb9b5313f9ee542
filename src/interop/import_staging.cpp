#include "interop/import_staging.h"

#include <fmt/format.h>
#include <unistd.h>

#include "util/fs.h"

namespace kevo::interop {
namespace fs = std::filesystem;

Result<fs::path> make_staging(const fs::path& out_dir, const std::string& name, bool overwrite) {
  std::error_code ec;
  fs::path final_dir = out_dir / name;
  if (fs::exists(final_dir, ec) && !overwrite)
    return fail("{}: already exists (use --force to replace it)", final_dir.string());
  fs::create_directories(out_dir, ec);
  if (ec) return fail("{}: cannot create: {}", out_dir.string(), ec.message());
  fs::path staging = out_dir / fmt::format(".{}.importing.{}", name, getpid());
  fs::remove_all(staging, ec);
  fs::create_directories(staging, ec);
  if (ec) return fail("{}: cannot create: {}", staging.string(), ec.message());
  return staging;
}

Status publish(const fs::path& staging, const fs::path& final_dir) {
  std::error_code ec;
  fs::remove_all(final_dir, ec);
  fs::rename(staging, final_dir, ec);
  if (ec) return fail("cannot move {} to {}: {}", staging.string(), final_dir.string(), ec.message());
  return {};
}

Status write_task_files(const fs::path& staging, const std::string& toml, const torch::ojson& sidecar) {
  KEVO_TRY(write_file_atomic(staging / "task.toml", toml));
  KEVO_TRY(write_file_atomic(staging / "torch.json", sidecar.dump(2) + "\n"));
  return {};
}

StagingGuard::~StagingGuard() {
  if (dir_.empty()) return;
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

}  // namespace kevo::interop
