// Where `kevo serve` listens, and the rule that keeps it private by default: a loopback address
// (127.0.0.0/8, ::1, localhost) needs nothing; any other address is refused unless a token guards
// every request (auth.h), because the pages show prompts, answers and kernels.
#pragma once

#include <string>

#include "util/result.h"

namespace kevo::serve {

struct ListenAddress {
  std::string host = "127.0.0.1";
  int port = 8080;  // 0: any free port
};

// "HOST:PORT", "[V6]:PORT", "HOST" (port 8080) or ":PORT" (loopback). Errors name the problem.
Result<ListenAddress> parse_listen(const std::string& text);
bool is_loopback(const std::string& host);
// Whether a token is acceptable: 8 to 256 printable ASCII characters that a cookie may carry
// (no space, quote, comma, semicolon or backslash).
Status check_token(const std::string& token);
// Refuses a non-loopback address without a token (the message says how to proceed), and a token
// check_token rejects.
Status check_bind(const ListenAddress& a, const std::string& token);

}  // namespace kevo::serve
