// API keys come from the environment or a key file, never from the config or the command line
// (which end up in shell history, process lists and run records).
#pragma once

#include <string>

#include "llm/config.h"
#include "util/result.h"

namespace kevo::llm {

// The provider's key: $api_key_env, else the same name in `key_file` (dotenv lines NAME=value).
// Empty when the provider needs none and none is set; a [fatal] error naming the variable
// when it needs one. Error messages name where to put the key, never a key.
Result<std::string> resolve_api_key(const ProviderConfig& p, const std::string& key_file);

}  // namespace kevo::llm
