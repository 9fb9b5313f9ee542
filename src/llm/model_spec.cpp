#include "llm/model_spec.h"

#include "llm/errors.h"

namespace kevo::llm {

Result<ModelSpec> parse_model_spec(std::string_view spec, const LlmConfig& cfg) {
  ModelSpec out;
  if (spec.starts_with("http://") || spec.starts_with("https://")) {
    auto hash = spec.rfind('#');
    if (hash == std::string_view::npos || hash + 1 == spec.size())
      return make_error(ErrorKind::kFatal,
                        fmt::format("model spec '{}' names a server but no model: write it as "
                                    "BASE_URL#MODEL, e.g. http://localhost:8000/v1#qwen2.5-coder-32b",
                                    spec));
    std::string base(spec.substr(0, hash));
    while (base.ends_with('/')) base.pop_back();
    out.model = std::string(spec.substr(hash + 1));
    out.text = base + "#" + out.model;
    out.provider.name = base;
    out.provider.protocol = Protocol::kOpenAI;
    out.provider.base_url = base;
    // Never send OPENAI_API_KEY to an arbitrary server: a URL model gets its own variable.
    out.provider.api_key_env = "KEVO_LLM_API_KEY";
    out.provider.key_required = false;
    out.provider.local = base.starts_with("http://localhost") || base.starts_with("http://127.") ||
                         base.starts_with("http://[::1]");
    // A configured provider with the same base URL supplies concurrency and key settings.
    for (const auto& [name, p] : cfg.providers)
      if (p.base_url == base) out.provider = p;
    return out;
  }
  auto colon = spec.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == spec.size())
    return make_error(ErrorKind::kFatal,
                      fmt::format("model spec '{}' is not PROVIDER:MODEL or BASE_URL#MODEL (e.g. "
                                  "openai:gpt-4.1, anthropic:claude-sonnet-4-5)",
                                  spec));
  std::string provider(spec.substr(0, colon));
  auto it = cfg.providers.find(provider);
  if (it == cfg.providers.end()) {
    std::string known;
    for (const auto& [name, p] : cfg.providers) known += (known.empty() ? "" : ", ") + name;
    return make_error(ErrorKind::kFatal,
                      fmt::format("unknown provider '{}' in model spec '{}'; known: {} (declare "
                                  "others under [llm.providers.NAME] or use BASE_URL#MODEL)",
                                  provider, spec, known));
  }
  out.provider = it->second;
  out.model = std::string(spec.substr(colon + 1));
  out.text = provider + ":" + out.model;
  return out;
}

}  // namespace kevo::llm
