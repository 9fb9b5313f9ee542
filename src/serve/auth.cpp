#include "serve/auth.h"

namespace kevo::serve {

namespace {

// The value of cookie `name` in a Cookie header ("a=1; b=2"), or "".
std::string cookie_value(const std::string& header, const std::string& name) {
  size_t pos = 0;
  while (pos < header.size()) {
    size_t end = header.find(';', pos);
    if (end == std::string::npos) end = header.size();
    size_t start = header.find_first_not_of(' ', pos);
    if (start < end) {
      size_t eq = header.find('=', start);
      if (eq < end && header.compare(start, eq - start, name) == 0) return header.substr(eq + 1, end - eq - 1);
    }
    pos = end + 1;
  }
  return "";
}

}  // namespace

bool TokenGate::matches(const std::string& candidate) const {
  // Constant time in the candidate's content: every byte is compared whatever differs first.
  unsigned diff = candidate.size() == token_.size() ? 0u : 1u;
  for (size_t i = 0; i < candidate.size(); ++i)
    diff |= static_cast<unsigned char>(candidate[i]) ^ static_cast<unsigned char>(token_[i % token_.size()]);
  return diff == 0;
}

Access TokenGate::check(const HttpRequest& req) const {
  if (!enabled()) return Access::kAllowed;
  const std::string bearer = "Bearer ";
  if (req.authorization.rfind(bearer, 0) == 0 && matches(req.authorization.substr(bearer.size())))
    return Access::kAllowed;
  if (std::string c = cookie_value(req.cookie, kTokenCookie); !c.empty() && matches(c)) return Access::kAllowed;
  if (auto q = req.param("token"); q && matches(*q)) return Access::kAllowedByQuery;
  return Access::kDenied;
}

std::string TokenGate::set_cookie() const {
  return std::string(kTokenCookie) + "=" + token_ + "; Path=/; HttpOnly; SameSite=Strict";
}

bool host_allowed(const std::string& host_header, const ListenAddress& listen, bool token_enabled) {
  if (token_enabled) return true;
  std::string name = host_header;
  if (!name.empty() && name.front() == '[') {
    name = name.substr(1, name.find(']') == std::string::npos ? std::string::npos : name.find(']') - 1);
  } else if (auto colon = name.rfind(':'); colon != std::string::npos) {
    name.resize(colon);
  }
  return !name.empty() && (is_loopback(name) || name == listen.host);
}

}  // namespace kevo::serve
