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
using Clock = std::chrono::steady_clock;

namespace {

Result<int> open_lock(const fs::path& p) {
  std::error_code ec;
  fs::create_directories(p.parent_path(), ec);
  ::chmod(p.parent_path().c_str(), 01777);  // every user's kevo shares it, as /tmp itself
  int fd = ::open(p.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) return fail("cannot open the GPU lock {}: {}", p.string(), std::strerror(errno));
  return fd;
}

std::string holder_of(int fd) {
  char buf[64] = {0};
  ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string who = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string("another process");
  while (!who.empty() && (who.back() == '\n' || who.back() == '\0')) who.pop_back();
  return who.empty() ? "another process" : who;
}

// Polls flock(op | LOCK_NB) until it succeeds or the deadline passes; tells on_wait once.
Status lock_until(int fd, int op, Clock::time_point deadline, const fs::path& p, const std::string& gpu,
                  const std::function<void(const std::string&)>& on_wait, bool& told) {
  for (;;) {
    if (::flock(fd, op | LOCK_NB) == 0) return {};
    if (errno != EWOULDBLOCK && errno != EINTR) return fail("cannot lock {}: {}", p.string(), std::strerror(errno));
    if (!told && on_wait) on_wait(holder_of(fd));
    told = true;
    if (Clock::now() > deadline)
      return fail("GPU {} is being timed by {} (lock {}); gave up waiting", gpu, holder_of(fd), p.string());
    // A timer waits on every candidate's lock: a short poll keeps that wait close to the holder's.
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace

fs::path GpuLock::path_for(const std::string& gpu_uuid) {
  const char* dir = std::getenv("KEVO_LOCK_DIR");
  std::string name;
  for (char c : gpu_uuid) name += (std::isalnum(static_cast<unsigned char>(c)) || c == '-') ? c : '_';
  return fs::path(dir && *dir ? dir : "/tmp/kevo-gpu-locks") / ("gpu-" + (name.empty() ? "unknown" : name) + ".lock");
}

Result<GpuLock> GpuLock::acquire(const std::string& gpu_uuid, std::chrono::milliseconds timeout,
                                 const std::function<void(const std::string&)>& on_wait, Mode mode) {
  const fs::path p = path_for(gpu_uuid), pi = fs::path(p.string() + ".intent");
  auto fd = open_lock(p);
  if (!fd) return fd.unexpected();
  auto ifd = open_lock(pi);
  if (!ifd) {
    ::close(*fd);
    return ifd.unexpected();
  }
  const auto t0 = Clock::now(), deadline = t0 + timeout;
  bool told = false;
  const bool excl = mode == Mode::Exclusive;
  // A timer holds the intent lock while it waits and times; shared holders pass through it.
  Status st = lock_until(*ifd, excl ? LOCK_EX : LOCK_SH, deadline, pi, gpu_uuid, on_wait, told);
  if (st) st = lock_until(*fd, excl ? LOCK_EX : LOCK_SH, deadline, p, gpu_uuid, on_wait, told);
  if (!st) {
    ::close(*fd);
    ::close(*ifd);
    return st.unexpected();
  }
  std::string me = "pid " + std::to_string(::getpid()) + "\n";
  if (!excl) {
    ::flock(*ifd, LOCK_UN);
    ::close(*ifd);
    *ifd = -1;
  } else {
    for (int f : {*fd, *ifd})  // who holds it, for those who wait on either file
      if (::ftruncate(f, 0) == 0) (void)!::pwrite(f, me.data(), me.size(), 0);
  }
  return GpuLock(*fd, *ifd, std::chrono::duration<double>(Clock::now() - t0).count());
}

GpuLock::~GpuLock() {
  for (int fd : {fd_, intent_fd_})
    if (fd >= 0) {
      ::flock(fd, LOCK_UN);
      ::close(fd);
    }
}

}  // namespace kevo
