// Fuzzes the checker-runner channel: the input is the byte stream a runner (or a candidate that
// took it over) writes on the reply pipe; every framed message in it is read, then decoded as each
// typed message of run/protocol.h with proto::decode, as the checker does.
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>

#include "run/channel.h"
#include "run/protocol.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A memfd rather than a pipe: no 64 KiB pipe buffer to fill, nothing left on disk.
  int fd = memfd_create("kevo-channel-fuzz", MFD_CLOEXEC);
  if (fd < 0) return 0;
  if (size && ::write(fd, data, size) != static_cast<ssize_t>(size)) {
    ::close(fd);
    return 0;
  }
  ::lseek(fd, 0, SEEK_SET);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (int i = 0; i < 64; ++i) {
    auto msg = i % 2 ? kevo::read_message(fd, deadline) : kevo::read_message_blocking(fd);
    if (!msg) break;
    (void)msg->dump();
    // Decoded as the checker does (proto::decode: an error value, never an exception).
    (void)kevo::proto::decode<kevo::proto::TimeBatchReply>(*msg, "time_batch reply");
    (void)kevo::proto::decode<kevo::proto::TimeBatchRequest>(*msg, "time_batch request");
    if (auto state = kevo::proto::decode<kevo::proto::DeviceState>(*msg, "device state"))
      (void)state->diff(*state);
  }
  ::close(fd);
  return 0;
}
