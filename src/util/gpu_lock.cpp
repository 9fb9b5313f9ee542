#include "util/gpu_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace kevo {
namespace fs = std::filesystem;

fs::path GpuLock::path_for(const std::string& gpu_uuid) {
  const char* dir = std::getenv("KEVO_LOCK_DIR");
  std::string name;
  for (char c : gpu_uuid) name += (std::isalnum(static_cast<unsigned char>(c)) || c == '-') ? c : '_';
  return fs::path(dir && *dir ? dir : "/tmp/kevo-gpu-locks") / ("gpu-" + (name.empty() ? "unknown" : name) + ".lock");
}

Result<GpuLock> GpuLock::acquire(const std::string& gpu_uuid, std::chrono::milliseconds timeout,
                                 const std::function<void(const std::string&)>& on_wait) {
  fs::path p = path_for(gpu_uuid);
  std::error_code ec;
  fs::create_directories(p.parent_path(), ec);
  ::chmod(p.parent_path().c_str(), 01777);  // every user's kevo shares it, as /tmp itself
  int fd = ::open(p.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) return fail("cannot open the GPU lock {}: {}", p.string(), std::strerror(errno));
  auto t0 = std::chrono::steady_clock::now();
  bool told = false;
  for (;;) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) break;
    if (errno != EWOULDBLOCK && errno != EINTR) {
      int e = errno;
      ::close(fd);
      return fail("cannot lock {}: {}", p.string(), std::strerror(e));
    }
    char holder[64] = {0};
    ssize_t n = ::pread(fd, holder, sizeof holder - 1, 0);
    std::string who = n > 0 ? std::string(holder, static_cast<size_t>(n)) : std::string("another process");
    while (!who.empty() && (who.back() == '\n' || who.back() == '\0')) who.pop_back();
    if (!told && on_wait) on_wait(who);
    told = true;
    if (std::chrono::steady_clock::now() - t0 > timeout) {
      ::close(fd);
      return fail("GPU {} is being timed by {} (lock {}); gave up after {} s", gpu_uuid, who, p.string(),
                  std::chrono::duration_cast<std::chrono::seconds>(timeout).count());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::string me = "pid " + std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) == 0) (void)!::pwrite(fd, me.data(), me.size(), 0);
  double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return GpuLock(fd, waited);
}

GpuLock::~GpuLock() {
  if (fd_ >= 0) {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
}

}  // namespace kevo
