#include "run/channel.h"

#include <poll.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace kevo {
namespace {

constexpr uint32_t kMaxMessage = 64u << 20;

Status write_all(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return fail(ErrorCode::kIo, "pipe write failed: {}", std::strerror(errno));
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return {};
}

// Reads exactly n bytes; deadline == nullopt blocks.
Status read_all(int fd, void* data, size_t n,
                std::optional<std::chrono::steady_clock::time_point> deadline) {
  char* p = static_cast<char*>(data);
  while (n) {
    if (deadline) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          *deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return fail(ErrorCode::kTimeout, "timeout waiting for the runner");
      pollfd pfd{fd, POLLIN, 0};
      int r = poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
      if (r < 0 && errno != EINTR) return fail("poll failed: {}", std::strerror(errno));
      if (r <= 0) continue;
    }
    ssize_t got = ::read(fd, p, n);
    if (got < 0) {
      if (errno == EINTR) continue;
      return fail(ErrorCode::kIo, "pipe read failed: {}", std::strerror(errno));
    }
    if (got == 0) return fail(ErrorCode::kClosed, "eof: the other side closed the channel");
    p += got;
    n -= static_cast<size_t>(got);
  }
  return {};
}

Result<json> read_impl(int fd, std::optional<std::chrono::steady_clock::time_point> deadline) {
  uint8_t len_bytes[4];
  KEVO_TRY(read_all(fd, len_bytes, 4, deadline));
  uint32_t len = len_bytes[0] | (len_bytes[1] << 8) | (len_bytes[2] << 16) |
                 (static_cast<uint32_t>(len_bytes[3]) << 24);
  if (len > kMaxMessage) return fail("protocol error: message of {} bytes", len);
  std::string text(len, '\0');
  KEVO_TRY(read_all(fd, text.data(), len, deadline));
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return fail("protocol error: message is not JSON");
  return j;
}

}  // namespace

Status write_message(int fd, const json& msg) {
  std::string text = msg.dump();
  uint32_t n = static_cast<uint32_t>(text.size());
  uint8_t len[4] = {static_cast<uint8_t>(n), static_cast<uint8_t>(n >> 8),
                    static_cast<uint8_t>(n >> 16), static_cast<uint8_t>(n >> 24)};
  KEVO_TRY(write_all(fd, len, 4));
  return write_all(fd, text.data(), text.size());
}

Result<json> read_message(int fd, std::chrono::steady_clock::time_point deadline) {
  return read_impl(fd, deadline);
}

Result<json> read_message_blocking(int fd) { return read_impl(fd, std::nullopt); }

Arena::~Arena() {
  if (ptr_) munmap(ptr_, size_);
  if (fd_ >= 0) ::close(fd_);
}

Arena& Arena::operator=(Arena&& o) noexcept {
  if (this != &o) {
    if (ptr_) munmap(ptr_, size_);
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_, ptr_ = o.ptr_, size_ = o.size_;
    o.fd_ = -1, o.ptr_ = nullptr, o.size_ = 0;
  }
  return *this;
}

Result<Arena> Arena::create(const char* name) {
  int fd = memfd_create(name, MFD_CLOEXEC);
  if (fd < 0) return fail("memfd_create: {}", std::strerror(errno));
  return adopt(fd);
}

Arena Arena::adopt(int fd) {
  Arena a;
  a.fd_ = fd;
  return a;
}

Status Arena::resize(size_t bytes) {
  if (bytes <= size_ && ptr_) return {};
  if (ftruncate(fd_, static_cast<off_t>(bytes)) != 0)
    return fail("cannot grow the shared buffer to {} bytes: {}", bytes, std::strerror(errno));
  return map(bytes);
}

Status Arena::map(size_t bytes) {
  if (ptr_ && bytes == size_) return {};
  if (ptr_) munmap(ptr_, size_);
  ptr_ = nullptr;
  size_ = 0;
  if (bytes == 0) return {};
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (p == MAP_FAILED) return fail("mmap of {} bytes failed: {}", bytes, std::strerror(errno));
  ptr_ = p;
  size_ = bytes;
  return {};
}

}  // namespace kevo
