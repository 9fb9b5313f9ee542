// Messages with file descriptors attached (SCM_RIGHTS) over a Unix SOCK_SEQPACKET socket: each
// send is one message, so a reply and the fds it hands over arrive together or not at all. The
// runner pool (run/runner_pool.h) hands a started runner's pipes to the evaluation that takes it.
#pragma once

#include <chrono>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "util/result.h"

namespace kevo {

struct FdMessage {
  std::string bytes;
  std::vector<int> fds;  // received close-on-exec; the receiver owns them
};

// Sends `bytes` (at most 64 KiB) with `fds` (at most 16) attached. The caller keeps its fds.
Status send_fd_message(int sock, const std::string& bytes, std::span<const int> fds = {});
// Waits until `deadline` for one message; a timeout is ErrorCode::kTimeout, the peer's end
// (orderly close, or a reset) ErrorCode::kClosed.
Result<FdMessage> recv_fd_message(int sock, std::chrono::steady_clock::time_point deadline);

// A connected SOCK_SEQPACKET socket to `path` (close-on-exec), or an error (kNotFound when nothing
// listens there).
Result<int> connect_seqpacket(const std::filesystem::path& path);
// A listening SOCK_SEQPACKET socket bound at `path` (close-on-exec, mode 0600; the caller makes
// sure the folder is its own).
Result<int> listen_seqpacket(const std::filesystem::path& path);
// The user id of the process at the other end of a connected Unix socket, or -1.
long peer_uid(int sock);

}  // namespace kevo
