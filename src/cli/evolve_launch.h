// What `kevo evolve` was started with beyond the engine's options: its models and their settings
// (no key: providers name the variable that holds one, and a config with `api_key` is refused),
// the evaluator kind and where it evaluated. Stored with the run (EngineOptions::launch), so
// `kevo evolve --resume RUN` continues the run as it was started, with no flag but the run's.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/pool_args.h"
#include "util/result.h"

namespace kevo::cli {

struct EvolveLaunch {
  std::vector<std::string> models;     // --model, in order
  std::vector<std::string> overrides;  // --set KEY=VALUE, in order
  std::string llm_mode;                // --llm ("": the default)
  std::string llm_toml;                // the LLM settings --config held, as text ("": none)
  std::string verifier_model;          // --verifier-model
  bool fake_gpu = false;               // --fake-gpu: the marker evaluator
  PoolArgs pool;                       // --gpus, --evals-per-gpu, --queue, --queue-slots

  nlohmann::json to_json() const;
  // A stored launch; a field of another type: an error naming it.
  static Result<EvolveLaunch> from_json(const nlohmann::json& j);
};

// The command that continues run `run_id`: the database named in full, since the run's own
// launch holds everything else.
std::string resume_command(int64_t run_id, const std::string& db);

}  // namespace kevo::cli
