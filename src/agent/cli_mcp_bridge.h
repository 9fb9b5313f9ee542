// How a confined agent CLI reaches kevo's MCP server. The CLI's sandbox (sandbox.h) hides the run
// database, and Landlock binds every descendant of the CLI, so `kevo mcp` cannot be the CLI's child.
// kevo starts it outside instead, behind a Unix socket in the episode's control folder; the stdio
// server the CLI is configured with is `kevo-mcp-bridge SOCKET`, which joins its stdin and stdout to
// that socket. Landlock does not govern connecting to a named socket, and nothing else of kevo is
// reachable through it: the bytes are the MCP session's and nothing more.
//
// The server's stdin and stdout are the accepted connection itself, so kevo relays nothing.
// One connection is accepted, then the socket file is removed: the agent's own shell commands
// cannot open a second session (and with it a second set of budgets). When the CLI's side closes,
// the server's stdin is closed, so it ends the session the way a client that disconnects ends it.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "util/result.h"
#include "util/subprocess.h"

namespace kevo::agent {

class McpBridgeHost {
 public:
  // Listens on `socket_path` (its folder must be private to the user); the server (`command`, in
  // kevo's environment without the variables `env_drop_prefixes` names) starts on the first
  // connection. Its stderr is appended to `stderr_log`.
  static Result<std::unique_ptr<McpBridgeHost>> start(const std::filesystem::path& socket_path,
                                                      std::vector<std::string> command,
                                                      std::vector<std::string> env_drop_prefixes,
                                                      std::filesystem::path stderr_log);
  // The same, with the MCP session served in this process (a search's episode, whose tools reach
  // the search itself): `serve` is called on the host's thread with the connection, and returns
  // when the client's side has closed.
  static Result<std::unique_ptr<McpBridgeHost>> start_in_process(const std::filesystem::path& socket_path,
                                                                 std::function<void(int fd)> serve);
  ~McpBridgeHost();  // finish(0 s)
  McpBridgeHost(const McpBridgeHost&) = delete;
  McpBridgeHost& operator=(const McpBridgeHost&) = delete;

  // Ends the session: stops listening, lets the server finish for up to `grace` after its client
  // went away (an evaluation in flight is recorded), then kills it. Idempotent.
  void finish(std::chrono::milliseconds grace);

  bool connected() const { return connected_; }
  // The server's wait status once it ended by itself; nullopt while running, never started or killed.
  std::optional<int> server_status() const;
  bool server_killed() const { return killed_; }
  // Why the server could not be started, if it could not.
  std::string start_error() const;
  std::string stderr_tail() const;

 private:
  McpBridgeHost() = default;
  void serve();
  void serve_here(int conn);
  void watch_server(int pid, int err_fd);
  static Result<std::unique_ptr<McpBridgeHost>> listen_on(const std::filesystem::path& socket_path);

  std::filesystem::path socket_path_, stderr_log_;
  std::vector<std::string> command_, drop_;
  int listen_fd_ = -1;
  int stop_pipe_[2] = {-1, -1};
  std::thread thread_;
  std::atomic<bool> connected_{false}, killed_{false}, finished_{false};
  std::atomic<bool> child_done_{false};
  std::atomic<int> child_pid_{-1};
  std::function<void(int fd)> serve_here_;  // in-process: what serves the connection
  std::atomic<int> conn_fd_{-1};            // in-process: the connection, shut down past the grace
  mutable std::mutex mu_;
  std::optional<int> status_;
  std::string start_error_, stderr_tail_;
};

// The confined side (kevo-mcp-bridge's main): relays stdin to the socket and the socket to stdout
// until the server closes it. Returns the exit status (1 when the socket cannot be reached).
int run_bridge_client(const std::string& socket_path);

}  // namespace kevo::agent
