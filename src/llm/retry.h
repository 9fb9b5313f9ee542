// When and how long to wait before trying a failed call again.
#pragma once

#include <optional>
#include <random>
#include <string>

namespace kevo::llm {

struct RetryPolicy {
  int max_attempts = 6;          // first try included
  double base_delay_s = 1.0;     // the first backoff, doubled each attempt
  double max_delay_s = 60.0;     // cap for the computed backoff
  double max_retry_after_s = 300;  // a server asking for a longer wait than this is not retried
};

// "Full jitter" backoff (a uniform draw in [0, min(max, base * 2^(attempt-1))]) spreads retries
// of many workers apart; a server's Retry-After is a floor, never shortened by the jitter.
// `attempt` counts the failed attempts so far (1 after the first failure).
double backoff_delay_s(const RetryPolicy& p, int attempt, std::optional<double> retry_after_s,
                       std::mt19937_64& rng);

// Seconds to wait from a Retry-After value: delta-seconds ("30", "1.5") or an HTTP-date
// ("Wed, 21 Oct 2015 07:28:00 GMT") relative to `wall_now` (Unix seconds).
std::optional<double> parse_retry_after(const std::string& value, double wall_now);

// What an HTTP status means for the retry loop.
enum class StatusClass { kOk, kRetryable, kFatal };
StatusClass classify_status(long status);

}  // namespace kevo::llm
