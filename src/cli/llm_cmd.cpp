// `kevo llm ...`: check a model's credentials and connectivity, and show what kevo knows about
// providers and prices.
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/signal_guard.h"
#include "llm/client.h"
#include "llm/errors.h"
#include "llm/model_spec.h"

namespace kevo::cli {

namespace {

llm::CancelToken g_cancel;

extern "C" void on_sigint(int) { g_cancel.cancel(); }

struct LlmOptions {
  std::string config_file;
  std::vector<std::string> overrides;
};

void add_config_options(CLI::App* cmd, LlmOptions& o) {
  cmd->add_option("-c,--config", o.config_file, "TOML file with an [llm] table")->check(CLI::ExistingFile);
  cmd->add_option("--set", o.overrides, "Override a config key, e.g. --set budget.max_cost_usd=2");
}

Result<llm::LlmConfig> load(const LlmOptions& o) {
  llm::LlmConfig cfg = llm::default_config();
  if (!o.config_file.empty()) {
    auto loaded = llm::load_config(o.config_file, cfg);
    if (!loaded) return loaded.unexpected();
    cfg = std::move(*loaded);
  }
  for (const auto& s : o.overrides) KEVO_TRY(llm::apply_override(cfg, s));
  return cfg;
}

int ping(const LlmOptions& o, const std::string& spec, const std::string& prompt, int max_tokens) {
  auto cfg = load(o);
  if (!cfg) {
    std::fprintf(stderr, "kevo llm ping: %s\n", cfg.error().message.c_str());
    return 2;
  }
  cfg->cache = llm::CacheMode::kLive;  // a ping must reach the provider
  cfg->retry.max_attempts = std::min(cfg->retry.max_attempts, 2);
  auto ctx = llm::make_context(std::move(*cfg));
  auto client = llm::make_client(spec, ctx);
  if (!client) {  // a bad spec or a missing key: the configuration, not the call
    std::fprintf(stderr, "kevo llm ping: %s\n", client.error().message.c_str());
    return 2;
  }
  llm::ChatRequest req = llm::ChatRequest::user(prompt);
  req.max_tokens = max_tokens;
  auto r = [&] {
    SignalGuard sigint(SIGINT, on_sigint);
    return (*client)->chat(req, g_cancel);
  }();
  if (!r) {
    std::fprintf(stderr, "kevo llm ping: %s\n", r.error().message.c_str());
    return llm::error_kind(r.error()) == llm::ErrorKind::kCancelled ? 130 : 1;
  }
  std::printf("model:    %s\n", r->model.c_str());
  std::printf("latency:  %.2f s (%d attempt%s)\n", r->latency_s, r->attempts, r->attempts == 1 ? "" : "s");
  std::printf("tokens:   %lld in, %lld out%s\n", static_cast<long long>(r->usage.input_tokens),
              static_cast<long long>(r->usage.output_tokens),
              r->usage.reasoning_tokens
                  ? fmt::format(" ({} reasoning)", r->usage.reasoning_tokens).c_str()
                  : "");
  if (r->cost_known) std::printf("cost:     $%.6f\n", r->cost_usd);
  else std::printf("cost:     unknown (no price for this model; add [llm.prices.\"...\"])\n");
  std::printf("finish:   %s\n", r->raw_finish.c_str());
  std::printf("answer:   %s\n", r->text.c_str());
  return 0;
}

int models(const LlmOptions& o) {
  auto cfg = load(o);
  if (!cfg) {
    std::fprintf(stderr, "kevo llm models: %s\n", cfg.error().message.c_str());
    return 2;
  }
  std::printf("providers (spec PROVIDER:MODEL, or BASE_URL#MODEL for an OpenAI-compatible server):\n");
  std::printf("  %-12s %-10s %-34s %-20s %s\n", "name", "protocol", "base url", "key", "concurrency");
  for (const auto& [name, p] : cfg->providers)
    std::printf("  %-12s %-10s %-34s %-20s %d\n", name.c_str(),
                p.protocol == llm::Protocol::kAnthropic ? "anthropic" : "openai", p.base_url.c_str(),
                p.api_key_env.empty() ? "(none)" : p.api_key_env.c_str(), p.max_concurrency);
  llm::PriceTable prices = llm::PriceTable::builtin();
  for (const auto& [k, p] : cfg->prices) prices.set(k, p);
  std::printf("\nprices, USD per 1M tokens (override under [llm.prices.\"MODEL\"]):\n");
  std::printf("  %-40s %8s %8s %8s\n", "model", "input", "cached", "output");
  for (const auto& [k, p] : prices.entries())
    std::printf("  %-40s %8.3f %8.3f %8.3f\n", k.c_str(), p.input_per_mtok,
                p.cached_input_per_mtok.value_or(p.input_per_mtok), p.output_per_mtok);
  return 0;
}

}  // namespace

void register_llm(CLI::App& app, int& exit_code) {
  auto* llm_cmd = app.add_subcommand("llm", "Talk to LLM providers");
  llm_cmd->require_subcommand(1);

  auto* ping_cmd = llm_cmd->add_subcommand(
      "ping", "Check a model's key and connectivity: print its answer, latency and cost.\n"
              "Exit codes: 0 it answered, 1 the call failed, 2 bad configuration (a bad spec, no key), 130 interrupted.");
  auto ping_opts = std::make_shared<LlmOptions>();
  auto spec = std::make_shared<std::string>();
  auto prompt = std::make_shared<std::string>("Reply with the single word: pong");
  auto max_tokens = std::make_shared<int>(256);
  ping_cmd->add_option("model", *spec,
                       "Model spec: openai:gpt-4.1, anthropic:claude-sonnet-4-5, "
                       "http://localhost:8000/v1#qwen2.5-coder-32b")
      ->required();
  ping_cmd->add_option("-p,--prompt", *prompt, "What to ask");
  ping_cmd->add_option("--max-tokens", *max_tokens, "Answer length limit");
  add_config_options(ping_cmd, *ping_opts);
  ping_cmd->callback([=, &exit_code] { exit_code = ping(*ping_opts, *spec, *prompt, *max_tokens); });

  auto* models_cmd = llm_cmd->add_subcommand("models", "List providers and the price table");
  auto models_opts = std::make_shared<LlmOptions>();
  add_config_options(models_cmd, *models_opts);
  models_cmd->callback([=, &exit_code] { exit_code = models(*models_opts); });
}

}  // namespace kevo::cli
