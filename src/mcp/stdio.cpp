#include "mcp/stdio.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <list>
#include <mutex>
#include <string>
#include <thread>

#include <fmt/format.h>

namespace kevo::mcp {

using nlohmann::json;

namespace {

// Writes whole lines; a client that stopped reading makes write fail, which ends nothing here
// (the session ends when its input does).
class LineWriter {
 public:
  explicit LineWriter(int fd) : fd_(fd) {}
  void write(const json& msg) {
    std::string line = dump_message(msg) + "\n";
    std::lock_guard lock(mu_);
    for (size_t off = 0; off < line.size();) {
      ssize_t n = ::write(fd_, line.data() + off, line.size() - off);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      off += static_cast<size_t>(n);
    }
  }

 private:
  int fd_;
  std::mutex mu_;
};

// The requests being handled: each on a thread, joined when done or at the end.
class InFlight {
 public:
  explicit InFlight(int max) : max_(max) {}
  ~InFlight() { wait_all(); }
  bool start(std::function<void()> work) {
    std::lock_guard lock(mu_);
    reap_locked();
    if (static_cast<int>(threads_.size()) >= max_) return false;
    auto done = std::make_shared<std::atomic<bool>>(false);
    threads_.push_back({std::thread([work = std::move(work), done] { work(); *done = true; }), done});
    return true;
  }
  void wait_all() {
    std::lock_guard lock(mu_);
    for (auto& t : threads_) t.thread.join();
    threads_.clear();
  }

 private:
  struct Worker {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  void reap_locked() {
    for (auto it = threads_.begin(); it != threads_.end();)
      if (*it->done) {
        it->thread.join();
        it = threads_.erase(it);
      } else {
        ++it;
      }
  }
  int max_;
  std::mutex mu_;
  std::list<Worker> threads_;
};

// Reads lines; a line over the limit is dropped as it streams past and reported once.
class LineReader {
 public:
  LineReader(int fd, size_t max) : fd_(fd), max_(max) {}
  enum class Got { kLine, kTooLong, kIdle, kEnd };
  Got next(std::string& line) {
    for (;;) {
      if (auto got = take(line)) return *got;
      pollfd p{fd_, POLLIN, 0};
      int r = ::poll(&p, 1, 200);
      if (r == 0 || (r < 0 && errno == EINTR)) return Got::kIdle;
      char buf[65536];
      ssize_t n = ::read(fd_, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return Got::kEnd;
      append(buf, static_cast<size_t>(n));
    }
  }

 private:
  std::optional<Got> take(std::string& line) {
    size_t nl = buf_.find('\n');
    if (nl == std::string::npos) return std::nullopt;
    const bool too_long = skipping_;
    line.assign(buf_, 0, nl);
    buf_.erase(0, nl + 1);
    skipping_ = false;
    return too_long ? Got::kTooLong : Got::kLine;
  }
  void append(const char* p, size_t n) {
    buf_.append(p, n);
    if (buf_.size() > max_ && buf_.find('\n') == std::string::npos) {
      skipping_ = true;  // keep only enough to find the line's end
      buf_.clear();
    }
  }
  int fd_;
  size_t max_;
  std::string buf_;
  bool skipping_ = false;
};

// Only tool calls take long; everything else is answered in order on the reader's thread, so an
// `initialize` is done before the requests that follow it are read.
bool slow(const std::optional<json>& j) {
  return j && j->is_object() && string_at(*j, "method") == "tools/call";
}

json id_of(const std::optional<json>& j) {
  if (!j || !j->is_object() || !j->contains("id")) return json();
  const json& id = (*j)["id"];
  return id.is_string() || id.is_number_integer() ? id : json();
}

void handle_line(Session& s, LineWriter& out, InFlight& inflight, const std::string& line, int max_in_flight) {
  if (line.find_first_not_of(" \t\r") == std::string::npos) return;  // a blank line is no message
  auto j = parse_json(line);
  if (!slow(j)) {
    if (auto reply = j ? s.handle(*j) : s.handle_text(line)) out.write(*reply);
    return;
  }
  const json id = id_of(j);
  auto work = [&s, &out, msg = std::move(*j)] {
    if (auto reply = s.handle(msg)) out.write(*reply);
  };
  if (inflight.start(std::move(work))) return;
  s.count_refused();
  out.write(rpc_error(id, RpcError::kServerBusy,
                      fmt::format("{} tool calls are in flight already; wait for their replies", max_in_flight)));
}

}  // namespace

CloseReason serve_stdio(Session& session, int in_fd, int out_fd, const StdioLimits& limits,
                        const std::function<bool()>& stop) {
  LineWriter out(out_fd);
  InFlight inflight(limits.max_in_flight);
  LineReader in(in_fd, limits.max_message_bytes);
  CloseReason why = CloseReason::kClientGone;
  for (std::string line;;) {
    auto got = in.next(line);
    if (got == LineReader::Got::kEnd) break;
    if (stop && stop()) {
      why = CloseReason::kShutdown;
      break;
    }
    if (got == LineReader::Got::kTooLong) {
      session.count_refused();
      out.write(rpc_error(json(), RpcError::kInvalidRequest,
                          fmt::format("a message over {} MiB was refused unread", limits.max_message_bytes >> 20)));
    } else if (got == LineReader::Got::kLine) {
      handle_line(session, out, inflight, line, limits.max_in_flight);
    }
  }
  inflight.wait_all();
  session.close(why);
  return why;
}

}  // namespace kevo::mcp
