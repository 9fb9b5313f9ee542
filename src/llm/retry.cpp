#include "llm/retry.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <ctime>

namespace kevo::llm {

double backoff_delay_s(const RetryPolicy& p, int attempt, std::optional<double> retry_after_s,
                       std::mt19937_64& rng) {
  double cap = std::min(p.max_delay_s, p.base_delay_s * std::ldexp(1.0, std::max(0, attempt - 1)));
  double delay = std::uniform_real_distribution<double>(0.0, std::max(cap, 0.0))(rng);
  if (retry_after_s) delay = std::max(delay, *retry_after_s);
  return delay;
}

std::optional<double> parse_retry_after(const std::string& value, double wall_now) {
  std::string v = value;
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.pop_back();
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.front()))) v.erase(0, 1);
  if (v.empty()) return std::nullopt;
  char* end = nullptr;
  double secs = std::strtod(v.c_str(), &end);
  if (end && *end == '\0') {
    if (!std::isfinite(secs) || secs < 0) return std::nullopt;
    return secs;
  }
  std::tm tm{};
  const char* rest = strptime(v.c_str(), "%a, %d %b %Y %H:%M:%S", &tm);
  if (!rest) return std::nullopt;
  double when = static_cast<double>(timegm(&tm));
  return std::max(0.0, when - wall_now);
}

StatusClass classify_status(long status) {
  if (status >= 200 && status < 300) return StatusClass::kOk;
  // 408 request timeout, 409 conflict (Anthropic: retry), 429 rate limit, 5xx incl. 529.
  if (status == 408 || status == 409 || status == 429 || status >= 500) return StatusClass::kRetryable;
  return StatusClass::kFatal;
}

}  // namespace kevo::llm
