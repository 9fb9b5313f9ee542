#include "llm/client.h"

#include <spdlog/spdlog.h>

#include <mutex>
#include <random>

#include "llm/errors.h"
#include "llm/http.h"
#include "llm/keys.h"
#include "llm/model_spec.h"
#include "llm/protocol.h"
#include "llm/retry.h"
#include "util/hash.h"

namespace kevo::llm {

std::shared_ptr<LlmContext> make_context(LlmConfig config, ContextOptions opts) {
  auto ctx = std::make_shared<LlmContext>();
  ctx->prices = PriceTable::builtin();
  for (const auto& [k, p] : config.prices) ctx->prices.set(k, p);
  ctx->budget = std::make_shared<Budget>(config.budget);
  ctx->config = std::move(config);
  ctx->cache = std::move(opts.cache);
  if (opts.clock) ctx->clock = opts.clock;
  ctx->seed = opts.seed ? opts.seed : std::random_device{}();
  return ctx;
}

namespace {

// Tokens by the common rule of thumb for BPE tokenizers on English and code: about 4 bytes a
// token, rounded up. Used only when a server reports no usage; the request's JSON body (not just
// its text) is counted, which errs high, the safe side for a budget.
Usage estimate_usage(size_t request_bytes, const ChatResponse& r) {
  Usage u;
  u.input_tokens = static_cast<int64_t>((request_bytes + 3) / 4);
  u.output_tokens = static_cast<int64_t>((r.text.size() + r.thinking.size() + 3) / 4);
  return u;
}

std::string shorten(std::string s, size_t n = 300) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  if (s.size() > n) s = s.substr(0, n) + "...";
  return s;
}

// One attempt's verdict for the retry loop.
struct Attempt {
  enum class Kind { kOk, kRetry, kFatal, kCancelled } kind = Kind::kOk;
  ChatResponse response;
  std::string why;  // for kRetry/kFatal: what went wrong, already redacted
  std::optional<double> retry_after_s;
};

class ProviderClient final : public LlmClient {
 public:
  ProviderClient(ModelSpec spec, std::shared_ptr<LlmContext> ctx, std::string key)
      : spec_(std::move(spec)), ctx_(std::move(ctx)), key_(std::move(key)),
        sem_(ctx_->limits.get(spec_.provider.name, spec_.provider.max_concurrency)),
        price_(spec_.provider.local ? std::optional<Price>(Price{})
                                    : ctx_->prices.find(spec_.text, spec_.model)),
        rng_(ctx_->seed ^ std::hash<std::string>{}(spec_.text)) {
    if (!price_)
      spdlog::warn("{}: no price known; its cost counts as $0 (add [llm.prices.\"{}\"])", spec_.text,
                   spec_.model);
  }

  const std::string& name() const override { return spec_.text; }

  Result<ChatResponse> chat(const ChatRequest& req, const CancelToken& cancel) override {
    if (cancel.cancelled()) return make_error(ErrorKind::kCancelled, spec_.text + ": cancelled");
    auto wire = build(req);
    if (!wire) return wire.unexpected();
    const std::string body = wire->body.dump();
    auto& cache = ctx_->cache;
    const CacheMode mode = ctx_->config.cache;
    std::string key;
    int occurrence = 0;
    if (cache) {
      // The full request: the model spec, the wire body, the caller's sample tag. Not the key,
      // and not a named provider's URL, so a run recorded through one endpoint replays anywhere.
      Sha256 h;
      h.add("kevo-llm-cache-v1").add(spec_.text).add(body).add(req.cache_tag);
      key = h.hex();
      occurrence = cache->next_occurrence(key);
      if (mode != CacheMode::kLive) {
        auto hit = cache->get(key, occurrence);
        if (!hit) return hit.unexpected();
        ChatResponse r;
        if (*hit && response_from_json((*hit)->response_json, r)) {
          r.model = spec_.text;
          r.from_cache = true;
          r.cost_usd = 0;
          r.attempts = 0;
          ctx_->budget->note_cache_hit(spec_.text);
          spdlog::debug("{}: answer from the cache ({} tokens)", spec_.text, r.usage.total());
          return finish(std::move(r));
        }
        if (mode == CacheMode::kReplay)
          return make_error(ErrorKind::kReplayMiss,
                            fmt::format("{}: replay mode and the cache has no answer for this "
                                        "request (key {}, occurrence {}); the prompt or settings "
                                        "differ from the recorded run, or it was never recorded",
                                        spec_.text, key.substr(0, 12), occurrence));
      }
    } else if (mode == CacheMode::kReplay) {
      return make_error(ErrorKind::kFatal, "replay mode needs a run database to replay from");
    }

    KEVO_TRY(ctx_->budget->reserve());
    auto result = call_with_retries(*wire, body, cancel);
    if (!result) {
      ctx_->budget->release();
      if (error_kind(result.error()) != ErrorKind::kCancelled) ctx_->budget->note_failure(spec_.text);
      return result;
    }
    ChatResponse& r = *result;
    r.model = spec_.text;
    if (r.usage.input_tokens == 0 && r.usage.output_tokens == 0) {
      // A server that omits usage must not make the token and money budgets free.
      r.usage = estimate_usage(body.size(), r);
      r.usage_estimated = true;
      spdlog::warn("{}: the server reported no token usage; counting an estimate ({} in + {} out tokens, "
                   "~4 bytes a token) against the budgets",
                   spec_.text, r.usage.input_tokens, r.usage.output_tokens);
    }
    r.cost_known = price_.has_value();
    r.cost_usd = price_ ? cost_usd(*price_, r.usage) : 0.0;
    ctx_->budget->commit(spec_.text, r.usage, r.cost_usd, r.cost_known, r.latency_s);
    if (cache) {
      auto st = cache->put(key, occurrence,
                           CacheEntry{spec_.text, body, response_to_json(r), r.cost_usd});
      // A lost cache row only costs a future replay; the answer itself is good.
      if (!st) spdlog::warn("{}: could not store the answer: {}", spec_.text, st.error().message);
    }
    spdlog::info("{}: {} in + {} out tokens, ${:.4f}, {:.1f} s, {} attempt(s), finish {}", spec_.text,
                 r.usage.input_tokens, r.usage.output_tokens, r.cost_usd, r.latency_s, r.attempts,
                 r.raw_finish);
    return finish(std::move(r));
  }

 private:
  // Merges the request over the configured options and builds the wire form.
  Result<WireRequest> build(const ChatRequest& req) const {
    const ModelOptions o = ctx_->config.options_for(spec_.text);
    ResolvedRequest r;
    r.system = !req.system.empty() ? req.system : o.system_prompt.value_or("");
    r.messages = req.messages;
    r.temperature = req.temperature ? req.temperature : o.temperature;
    r.max_tokens = req.max_tokens.value_or(o.max_tokens.value_or(16384));
    r.reasoning_effort = req.reasoning_effort ? req.reasoning_effort : o.reasoning_effort;
    r.thinking_budget = req.thinking_budget ? req.thinking_budget : o.thinking_budget;
    r.tools = req.tools;
    if (r.messages.empty())
      return make_error(ErrorKind::kFatal, spec_.text + ": a request needs at least one message");
    return spec_.provider.protocol == Protocol::kAnthropic ? anthropic_request(spec_, r)
                                                           : openai_request(spec_, r);
  }

  // Refusals cost tokens and are cached like any answer, but are not answers.
  Result<ChatResponse> finish(ChatResponse r) const {
    if (r.finish == FinishReason::kRefusal || r.finish == FinishReason::kContentFilter)
      return make_error(ErrorKind::kRefusal,
                        fmt::format("{}: the model declined ({}): {}", spec_.text, r.raw_finish,
                                    shorten(redact(r.text, key_))));
    if (r.finish == FinishReason::kLength)
      spdlog::warn("{}: the answer hit max_tokens and may be cut off", spec_.text);
    return r;
  }

  Result<ChatResponse> call_with_retries(const WireRequest& wire, const std::string& body,
                                         const CancelToken& cancel) {
    const RetryPolicy& policy = ctx_->config.retry;
    HttpPost http{wire.url,
                     spec_.provider.protocol == Protocol::kAnthropic ? anthropic_headers(spec_, key_)
                                                                     : openai_headers(spec_, key_),
                     body, ctx_->config.connect_timeout_s, ctx_->config.timeout_s,
                     static_cast<size_t>(ctx_->config.max_response_bytes)};
    std::string last;
    for (int attempt = 1;; ++attempt) {
      Attempt a = once(http, cancel);
      if (a.kind == Attempt::Kind::kOk) {
        a.response.attempts = attempt;
        return std::move(a.response);
      }
      if (a.kind == Attempt::Kind::kCancelled)
        return make_error(ErrorKind::kCancelled, spec_.text + ": cancelled");
      if (a.kind == Attempt::Kind::kFatal) return make_error(ErrorKind::kFatal, a.why);
      last = a.why;
      if (attempt >= policy.max_attempts)
        return make_error(ErrorKind::kTransient,
                          fmt::format("{}: gave up after {} attempt(s); last error: {}", spec_.text,
                                      attempt, last));
      if (a.retry_after_s && *a.retry_after_s > policy.max_retry_after_s)
        return make_error(ErrorKind::kTransient,
                          fmt::format("{}: the provider asks to wait {:.0f} s (more than "
                                      "max_retry_after_s = {:.0f}); last error: {}",
                                      spec_.text, *a.retry_after_s, policy.max_retry_after_s, last));
      double delay;
      {
        std::lock_guard lock(rng_mu_);
        delay = backoff_delay_s(policy, attempt, a.retry_after_s, rng_);
      }
      spdlog::warn("{}: {}; retrying in {:.1f} s (attempt {} of {})", spec_.text, last, delay,
                   attempt + 1, policy.max_attempts);
      ctx_->budget->note_retry(spec_.text);
      if (!ctx_->clock->sleep_for(Seconds(delay), cancel))
        return make_error(ErrorKind::kCancelled, spec_.text + ": cancelled");
    }
  }

  Attempt once(const HttpPost& http, const CancelToken& cancel) {
    Attempt a;
    if (!sem_->acquire(cancel)) {
      a.kind = Attempt::Kind::kCancelled;
      return a;
    }
    const double start = ctx_->clock->now();
    HttpOutcome out;
    {
      SemaphoreSlot slot(*sem_);
      out = http_post(http, cancel);
    }
    const double latency = ctx_->clock->now() - start;
    switch (out.kind) {
      case HttpOutcome::Kind::kCancelled: a.kind = Attempt::Kind::kCancelled; return a;
      case HttpOutcome::Kind::kTimeout:
        a.kind = Attempt::Kind::kRetry;
        a.why = fmt::format("no answer within {:.0f} s (timeout_s)", http.timeout_s);
        return a;
      case HttpOutcome::Kind::kNetwork:
        a.kind = Attempt::Kind::kRetry;
        a.why = "network error: " + redact(out.error, key_);
        return a;
      case HttpOutcome::Kind::kTooLarge:
        // Not retried: a server that sent this much once will again, and every try may be billed.
        a.kind = Attempt::Kind::kFatal;
        a.why = fmt::format("{}: {} (llm.max_response_bytes); the answer was dropped unread. A real answer "
                            "is far smaller: check the server or base URL, or raise max_response_bytes",
                            spec_.text, out.error);
        return a;
      case HttpOutcome::Kind::kOk: break;
    }
    const HttpResponse& resp = out.response;
    const long status = resp.status;
    if (classify_status(status) == StatusClass::kOk) {
      auto parsed = spec_.provider.protocol == Protocol::kAnthropic ? anthropic_parse(resp.body)
                                                                   : openai_parse(resp.body);
      if (!parsed) {
        // A cut or garbled answer is usually a proxy or server hiccup: worth another try.
        a.kind = Attempt::Kind::kRetry;
        a.why = "unusable answer: " + redact(parsed.error().message, key_);
        return a;
      }
      a.response = std::move(*parsed);
      a.response.latency_s = latency;
      if (a.response.request_id.empty()) a.response.request_id = resp.header("request-id");
      if (a.response.request_id.empty()) a.response.request_id = resp.header("x-request-id");
      return a;
    }
    const ErrorBody err = parse_error_body(resp.body);
    const std::string server =
        shorten(redact(fmt::format("{}{}{}", err.type, err.type.empty() ? "" : ": ", err.message), key_));
    // Rate-limit answers that mean "out of money" will not clear by waiting.
    const bool quota = err.code == "insufficient_quota" || err.code == "enforced_spend_limit_reached" ||
                       err.type == "insufficient_quota";
    if (classify_status(status) == StatusClass::kRetryable && !quota) {
      a.kind = Attempt::Kind::kRetry;
      a.why = fmt::format("HTTP {} ({})", status, server);
      if (auto ms = resp.header("retry-after-ms"); !ms.empty()) {
        if (auto v = parse_retry_after(ms, 0)) a.retry_after_s = *v / 1000.0;
      }
      if (!a.retry_after_s)
        a.retry_after_s = parse_retry_after(resp.header("retry-after"), ctx_->clock->wall_now());
      return a;
    }
    a.kind = Attempt::Kind::kFatal;
    a.why = fatal_message(status, server, quota);
    return a;
  }

  std::string fatal_message(long status, const std::string& server, bool quota) const {
    const std::string& p = spec_.provider.name;
    const std::string key_hint =
        spec_.provider.api_key_env.empty()
            ? std::string("configure a key for this provider (api_key_env)")
            : fmt::format("check {} (environment or key file)", spec_.provider.api_key_env);
    std::string fix;
    if (quota) fix = "the account is out of credit or over its spending limit; add credit or raise the limit";
    else if (status == 401) fix = "the API key was rejected: " + key_hint;
    else if (status == 403) fix = fmt::format("the key may not use model '{}': {} or pick another model", spec_.model, key_hint);
    else if (status == 404) fix = fmt::format("check the model name '{}' and the base URL {}", spec_.model, spec_.provider.base_url);
    else if (status == 402) fix = "billing: add credit to the account";
    else if (status == 413) fix = "the request is too large: shorten the prompt";
    else if (status == 400 || status == 422)
      fix = "the request was refused as invalid: adjust this model's options (max_tokens, "
            "temperature, reasoning_effort, thinking_budget) in the llm config";
    else fix = "see the provider's message";
    return fmt::format("{}: {} answered HTTP {} ({}); {}", spec_.text, p, status, server, fix);
  }

  ModelSpec spec_;
  std::shared_ptr<LlmContext> ctx_;
  std::string key_;  // only ever placed in a request header
  std::shared_ptr<Semaphore> sem_;
  std::optional<Price> price_;
  std::mutex rng_mu_;
  std::mt19937_64 rng_;
};

}  // namespace

Result<std::unique_ptr<LlmClient>> make_client(const std::string& spec,
                                               std::shared_ptr<LlmContext> ctx) {
  auto parsed = parse_model_spec(spec, ctx->config);
  if (!parsed) return parsed.unexpected();
  if (ctx->config.cache == CacheMode::kReplay && !ctx->cache)
    return make_error(ErrorKind::kFatal, "replay mode needs a run database to replay from");
  // Replay never reaches the network, so it needs no key.
  std::string key;
  if (ctx->config.cache != CacheMode::kReplay) {
    auto k = resolve_api_key(parsed->provider, ctx->config.key_file);
    if (!k) return k.unexpected();
    key = std::move(*k);
  }
  return std::unique_ptr<LlmClient>(new ProviderClient(std::move(*parsed), std::move(ctx), std::move(key)));
}

}  // namespace kevo::llm
