// One tool call a model made in an episode, checked and answered over a ToolProvider (the same
// tools `kevo mcp` serves). A call the provider must never see (arguments that are not a JSON
// object, a tool it does not list, arguments that do not fit the tool's schema: a held-out config
// asked for by name, a field for reference outputs) is answered with a tool error the model sees,
// and marked malformed so the episode counts it.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "llm/types.h"
#include "mcp/tool.h"

namespace kevo::agent {

struct DispatchedCall {
  llm::ToolResultBlock result;  // what goes back to the model
  std::string tool;             // the name the model called
  bool malformed = false;       // refused before the provider saw it
  nlohmann::json structured;    // the provider's structured result (empty when refused)
  nlohmann::json shown_arguments;  // the arguments as a transcript keeps them (sources by size)
};

// The provider's tools as the LLM layer offers them (name, description, JSON schema).
std::vector<llm::ToolDef> tool_defs(const std::vector<mcp::ToolSpec>& specs);

DispatchedCall dispatch_tool_call(mcp::ToolProvider& tools, const std::vector<mcp::ToolSpec>& specs,
                                  const llm::ToolCall& call);

}  // namespace kevo::agent
