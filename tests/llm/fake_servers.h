// Loopback servers for the LLM client tests: a scripted HTTP server (cpp-httplib) and a raw
// socket server for faults httplib cannot produce (connection reset, truncated body).
#pragma once

#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace kevo::llm::testing {

struct Scripted {
  int status = 200;
  std::string body;
  std::map<std::string, std::string> headers;
  int delay_ms = 0;  // hold the answer back (read timeouts, concurrency)
};

struct Seen {
  std::string path;
  std::multimap<std::string, std::string> headers;
  std::string body;
};

class ScriptServer {
 public:
  ScriptServer() {
    srv_.Post(".*", [this](const httplib::Request& req, httplib::Response& res) { handle(req, res); });
    port_ = srv_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { srv_.listen_after_bind(); });
    while (!srv_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~ScriptServer() {
    stopping_ = true;
    srv_.stop();
    thread_.join();
  }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  // Answers in order; after they run out, `fallback` answers every request.
  void push(Scripted s) {
    std::lock_guard lock(mu_);
    script_.push_back(std::move(s));
  }
  void set_fallback(Scripted s) {
    std::lock_guard lock(mu_);
    fallback_ = std::move(s);
  }
  std::vector<Seen> seen() {
    std::lock_guard lock(mu_);
    return seen_;
  }
  size_t count() {
    std::lock_guard lock(mu_);
    return seen_.size();
  }
  int max_in_flight() const { return max_in_flight_; }

 private:
  void handle(const httplib::Request& req, httplib::Response& res) {
    Scripted s;
    {
      std::lock_guard lock(mu_);
      seen_.push_back({req.path, {req.headers.begin(), req.headers.end()}, req.body});
      if (!script_.empty()) {
        s = script_.front();
        script_.pop_front();
      } else {
        s = fallback_;
      }
    }
    int now = ++in_flight_;
    for (int m = max_in_flight_; now > m && !max_in_flight_.compare_exchange_weak(m, now);) {
    }
    auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(s.delay_ms);
    while (!stopping_ && std::chrono::steady_clock::now() < end)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    --in_flight_;
    res.status = s.status;
    for (const auto& [k, v] : s.headers) res.set_header(k, v);
    res.set_content(s.body, "application/json");
  }

  httplib::Server srv_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::deque<Scripted> script_;
  Scripted fallback_{500, R"({"error":{"type":"api_error","message":"unscripted"}})"};
  std::vector<Seen> seen_;
  std::atomic<int> in_flight_{0}, max_in_flight_{0};
  std::atomic<bool> stopping_{false};
};

// Serves each connection with the next action: a full raw HTTP response, a TCP reset, or a
// response cut short of its Content-Length.
class RawServer {
 public:
  enum class Action { kRespond, kReset, kTruncate };
  struct Step {
    Action action;
    std::string raw;  // kRespond: the full response; kTruncate: what is sent before closing
  };

  RawServer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(fd_, 16);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { loop(); });
  }
  ~RawServer() {
    stopping_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  void push(Step s) {
    std::lock_guard lock(mu_);
    steps_.push_back(std::move(s));
  }
  int connections() const { return connections_; }

  static std::string http_ok(const std::string& body) {
    return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
           "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  }

 private:
  void loop() {
    while (!stopping_) {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      ++connections_;
      read_request(c);
      Step s{Action::kRespond, http_ok("{}")};
      {
        std::lock_guard lock(mu_);
        if (!steps_.empty()) {
          s = steps_.front();
          steps_.pop_front();
        }
      }
      if (s.action == Action::kReset) {
        linger l{1, 0};  // close with RST instead of FIN
        ::setsockopt(c, SOL_SOCKET, SO_LINGER, &l, sizeof l);
      } else {
        ::send(c, s.raw.data(), s.raw.size(), MSG_NOSIGNAL);
      }
      ::close(c);
    }
  }
  static void read_request(int c) {
    std::string data;
    char buf[4096];
    size_t need = std::string::npos;
    while (true) {
      ssize_t n = ::recv(c, buf, sizeof buf, 0);
      if (n <= 0) return;
      data.append(buf, static_cast<size_t>(n));
      size_t hdr_end = data.find("\r\n\r\n");
      if (hdr_end == std::string::npos) continue;
      if (need == std::string::npos) {
        size_t cl = 0;
        for (const char* name : {"Content-Length:", "content-length:"}) {
          size_t p = data.find(name);
          if (p != std::string::npos && p < hdr_end) cl = std::stoul(data.substr(p + 15));
        }
        need = hdr_end + 4 + cl;
      }
      if (data.size() >= need) return;
    }
  }

  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::deque<Step> steps_;
  std::atomic<int> connections_{0};
  std::atomic<bool> stopping_{false};
};

}  // namespace kevo::llm::testing
