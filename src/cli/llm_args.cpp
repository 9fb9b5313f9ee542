#include "cli/llm_args.h"

#include "evolve/strategy.h"
#include "util/enum_text.h"
#include "util/fs.h"

namespace kevo::cli {

Result<std::string> llm_toml_of(const std::string& config_file) {
  if (config_file.empty()) return std::string();
  auto has_llm = evolve::toml_has_table(config_file, "llm");
  if (!has_llm) return has_llm.unexpected();
  auto has_evolve = evolve::toml_has_table(config_file, "evolve");
  if (!has_evolve) return has_evolve.unexpected();
  if (!*has_llm && *has_evolve) return std::string();
  return read_file(config_file);
}

Result<llm::LlmConfig> llm_config_of(const std::string& llm_toml, const std::vector<std::string>& overrides,
                                     const std::vector<std::string>& models, const std::string& llm_mode) {
  llm::LlmConfig lcfg = llm::default_config();
  if (!llm_toml.empty()) {
    auto c = llm::parse_config(llm_toml, lcfg);
    if (!c) return c.unexpected();
    lcfg = *c;
  }
  for (const auto& s : overrides) KEVO_TRY(llm::apply_override(lcfg, s));
  if (!models.empty()) lcfg.models = models;
  if (!llm_mode.empty()) {
    auto m = llm::parse_cache_mode(llm_mode);
    if (!m) return fail("{}", enum_unknown(llm::kCacheModeTexts, "LLM mode", llm_mode));
    lcfg.cache = *m;
  }
  return lcfg;
}

Result<Models> models_of(const llm::LlmConfig& lcfg, store::RunDb& db, uint64_t seed,
                         const std::string& verifier_model) {
  Models m;
  if (lcfg.models.empty()) {
    if (!verifier_model.empty()) return fail("--verifier-model needs a proposing model (--model or [llm] models)");
    return m;
  }
  auto c = db.handle() ? llm::ResponseCache::attach(db.handle())
                       : llm::ResponseCache::open((cache_dir() / "llm_cache.sqlite").string());
  if (!c) return c.unexpected();
  m.cache = std::move(*c);
  auto ctx = llm::make_context(lcfg, {.cache = m.cache, .seed = seed});
  auto e = llm::make_ensemble(ctx);
  if (!e) return e.unexpected();
  m.ensemble = std::move(*e);
  if (!verifier_model.empty()) {
    auto v = llm::make_client(verifier_model, ctx);
    if (!v) return fail("--verifier-model: {}", v.error().message);
    m.verifier = std::move(*v);
  }
  return m;
}

}  // namespace kevo::cli
