// A small tmpfs mounted for one test (disk-full faults: the run database, the compile cache),
// unmounted and removed at destruction. Needs root (CI and the CPU machine run as root); `ok` is
// false where the mount is refused, and the test skips visibly.
#pragma once

#include <sys/mount.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace kevo::test {

struct SmallFs {
  std::filesystem::path dir;
  bool ok = false;
  // opts: tmpfs mount options, e.g. "size=600k".
  SmallFs(const std::string& tag, const char* opts) {
    dir = std::filesystem::temp_directory_path() / ("kevo-small-fs-" + std::to_string(::getpid()) + "-" + tag);
    std::filesystem::create_directories(dir);
    ok = ::mount("tmpfs", dir.c_str(), "tmpfs", 0, opts) == 0;
  }
  ~SmallFs() {
    if (ok) ::umount2(dir.c_str(), MNT_DETACH);
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  SmallFs(const SmallFs&) = delete;
  SmallFs& operator=(const SmallFs&) = delete;
};

}  // namespace kevo::test
