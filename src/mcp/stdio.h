// The stdio transport: newline-delimited JSON-RPC messages on the server's stdin and stdout, as an
// MCP client that starts the server speaks it. Each request runs on its own thread, so a ping or a
// history call is answered while an evaluation runs; replies are written whole, one per line.
// Nothing else may reach stdout (logs go to stderr).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>

#include "mcp/session.h"

namespace kevo::mcp {

struct StdioLimits {
  size_t max_message_bytes = 64u << 20;  // a longer line is refused unread (and skipped)
  int max_in_flight = 32;                // requests being handled at once; more are refused
};

// Serves until the input ends (the client is gone) or `stop` returns true (polled every 200 ms);
// then waits for the requests in flight to finish, so each is answered and recorded, and closes
// the session. Returns the reason the session closed.
CloseReason serve_stdio(Session& session, int in_fd, int out_fd, const StdioLimits& limits = {},
                        const std::function<bool()>& stop = {});

}  // namespace kevo::mcp
