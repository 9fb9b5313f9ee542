#include "serve/listen.h"

#include <arpa/inet.h>

#include <charconv>

namespace kevo::serve {

Result<ListenAddress> parse_listen(const std::string& text) {
  ListenAddress a;
  std::string port;
  if (text.empty()) return fail("--listen: empty address (want HOST:PORT, e.g. 127.0.0.1:8080)");
  if (text.front() == '[') {
    auto close = text.find(']');
    if (close == std::string::npos) return fail("--listen {}: no closing ']'", text);
    a.host = text.substr(1, close - 1);
    if (close + 1 < text.size()) {
      if (text[close + 1] != ':') return fail("--listen {}: want [ADDRESS]:PORT", text);
      port = text.substr(close + 2);
    }
  } else if (auto colon = text.rfind(':'); colon == std::string::npos) {
    a.host = text;
  } else if (text.find(':') != colon) {
    return fail("--listen {}: an IPv6 address goes in brackets, e.g. [::1]:8080", text);
  } else {
    a.host = colon == 0 ? "127.0.0.1" : text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  if (a.host.empty()) return fail("--listen {}: empty host", text);
  if (!port.empty()) {
    int p = -1;
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
    if (ec != std::errc() || end != port.data() + port.size() || p < 0 || p > 65535)
      return fail("--listen {}: port '{}' is not a number from 0 to 65535", text, port);
    a.port = p;
  }
  return a;
}

bool is_loopback(const std::string& host) {
  if (host == "localhost") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6);
  return false;
}

Status check_token(const std::string& token) {
  if (token.size() < 8 || token.size() > 256) return fail("--token: want 8 to 256 characters, got {}", token.size());
  for (unsigned char c : token)
    if (c <= ' ' || c >= 0x7f || c == '"' || c == ',' || c == ';' || c == '\\')
      return fail("--token: only printable ASCII without space, quote, comma, semicolon or backslash");
  return {};
}

Status check_bind(const ListenAddress& a, const std::string& token) {
  if (!token.empty()) KEVO_TRY(check_token(token));
  if (is_loopback(a.host) || !token.empty()) return {};
  return fail("refusing to listen on {}: the pages show every prompt, answer and kernel of the database, so an "
              "address other than loopback needs --token TOKEN (or $KEVO_SERVE_TOKEN); or listen on 127.0.0.1 "
              "and reach it through an SSH tunnel",
              a.host);
}

}  // namespace kevo::serve
