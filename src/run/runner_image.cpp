#include "run/runner_image.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>

#include "run/elf_runpath.h"
#include "util/hash.h"

namespace kevo {
namespace fs = std::filesystem;
namespace {

constexpr unsigned kMfdExec = 0x0010U;  // MFD_EXEC (Linux 6.3): say so where vm.memfd_noexec asks
constexpr int kSeals = F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL;
constexpr off_t kMaxBytes = 1L << 30;

Result<std::string> read_regular(const fs::path& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return fail(errno == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIo, "cannot read the runner {}: {}",
                path.string(), std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 || st.st_size > kMaxBytes)
    return ::close(fd), fail(ErrorCode::kIo, "the runner {} is not a regular file of a usable size", path.string());
  std::string bytes;
  char buf[1 << 16];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || static_cast<off_t>(bytes.size()) + n > kMaxBytes)
      return ::close(fd), fail(ErrorCode::kIo, "reading the runner {}: {}", path.string(), std::strerror(errno));
    bytes.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return bytes;
}

// A sealed memfd holding `bytes`, reopened read-only (no descriptor that could write stays open).
Result<int> sealed_memfd(const std::string& bytes) {
  int fd = memfd_create("kevo-runner", MFD_CLOEXEC | MFD_ALLOW_SEALING | kMfdExec);
  if (fd < 0 && errno == EINVAL) fd = memfd_create("kevo-runner", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return fail("memfd_create for the runner: {}", std::strerror(errno));
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return ::close(fd), fail("writing the runner's memfd: {}", std::strerror(errno));
    done += static_cast<size_t>(n);
  }
  if (fcntl(fd, F_ADD_SEALS, kSeals) != 0 || (fcntl(fd, F_GET_SEALS) & kSeals) != kSeals)
    return ::close(fd), fail("sealing the runner's memfd: {}", std::strerror(errno));
  const std::string self = "/proc/self/fd/" + std::to_string(fd);
  const int ro = open(self.c_str(), O_RDONLY | O_CLOEXEC);
  if (ro < 0) return fd;  // no /proc: the sealed read-write one (it cannot be written either)
  ::close(fd);
  return ro;
}

}  // namespace

RunnerImage::~RunnerImage() {
  if (fd_ >= 0) ::close(fd_);
}

Result<std::shared_ptr<const RunnerImage>> RunnerImage::read(const fs::path& path, const std::string& expected) {
  auto bytes = read_regular(path);
  if (!bytes) return bytes.unexpected();
  const std::string digest = sha256_hex(*bytes);
  if (!expected.empty() && digest != expected)
    return fail("the runner {} is not the expected one: its SHA-256 is {}, {} was expected (replaced or "
                "rebuilt since?): not used",
                path.string(), digest, expected);
  auto fd = sealed_memfd(*bytes);
  if (!fd) return fd.unexpected();
  std::shared_ptr<RunnerImage> im(new RunnerImage());
  im->fd_ = *fd;
  im->sha256_ = digest;
  im->path_ = path;
  im->script_ = bytes->rfind("#!", 0) == 0;
  std::error_code ec;
  if (auto rp = elf_runpath(*bytes)) im->origin_dirs_ = origin_entries(*rp, fs::canonical(path, ec).parent_path());
  return std::shared_ptr<const RunnerImage>(std::move(im));
}

Result<std::string> file_sha256(const fs::path& path) {
  auto bytes = read_regular(path);
  if (!bytes) return bytes.unexpected();
  return sha256_hex(*bytes);
}

Result<std::shared_ptr<const RunnerImage>> runner_image(const fs::path& path) {
  static std::mutex mu;
  static auto* images = new std::map<std::string, std::shared_ptr<const RunnerImage>>;  // kept to exit
  std::lock_guard l(mu);
  if (auto it = images->find(path.string()); it != images->end()) return it->second;
  auto im = RunnerImage::read(path);
  if (!im) return im.unexpected();
  images->emplace(path.string(), *im);
  return *im;
}

}  // namespace kevo
