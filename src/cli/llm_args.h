// The LLM side of `kevo evolve` and `kevo translate`: their settings from a config file, --set,
// --model and --llm, and the models built from them on the run database's answer cache.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "llm/cache.h"
#include "llm/client.h"
#include "llm/config.h"
#include "llm/ensemble.h"
#include "store/run_db.h"
#include "util/result.h"

namespace kevo::cli {

// The LLM settings a config file holds, as text ("" when it has none: LLM keys sit under [llm],
// and a file holding only [evolve] has none).
Result<std::string> llm_toml_of(const std::string& config_file);

// The LLM settings: defaults, then a config file's (llm_toml_of), then --set, --model, --llm.
Result<llm::LlmConfig> llm_config_of(const std::string& llm_toml, const std::vector<std::string>& overrides,
                                     const std::vector<std::string>& models, const std::string& llm_mode);

// The model (or ensemble) on the run database's answer cache; none configured: null (offline).
struct Models {
  std::shared_ptr<llm::ResponseCache> cache;
  std::unique_ptr<llm::Ensemble> ensemble;
  std::unique_ptr<llm::LlmClient> verifier;  // --verifier-model: shares the context (budget, cache)
};

Result<Models> models_of(const llm::LlmConfig& lcfg, store::RunDb& db, uint64_t seed,
                         const std::string& verifier_model = "");

}  // namespace kevo::cli
