// Framed JSON messages between the checker and kevo-runner over dedicated pipes (never the
// runner's stdout, which candidate code can print to). Bulk tensor data travels in an Arena.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>

#include "util/result.h"

namespace kevo {

using json = nlohmann::json;

// Writes a 4-byte little-endian length and the JSON text.
Status write_message(int fd, const json& msg);
// Reads one message, waiting at most until `deadline`; a timeout or EOF is an error with code
// ErrorCode::kTimeout or ErrorCode::kClosed.
Result<json> read_message(int fd, std::chrono::steady_clock::time_point deadline);
// Blocking read (used by the runner, which has nothing else to do).
Result<json> read_message_blocking(int fd);

// A shared-memory region (memfd) the checker fills with inputs and the runner fills with outputs.
class Arena {
 public:
  Arena() = default;
  ~Arena();
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
  Arena(Arena&& o) noexcept { *this = std::move(o); }
  Arena& operator=(Arena&& o) noexcept;

  static Result<Arena> create(const char* name);
  static Arena adopt(int fd);   // the runner side
  Status resize(size_t bytes);  // grows the file (checker) and remaps
  Status map(size_t bytes);     // remaps at the given size (runner)
  uint8_t* data() { return static_cast<uint8_t*>(ptr_); }
  size_t size() const { return size_; }
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
  void* ptr_ = nullptr;
  size_t size_ = 0;
};

}  // namespace kevo
