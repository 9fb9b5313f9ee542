// The script of the loopback model server (fake_model_server.h): the turns a model would take, each
// either tool calls or a final text, and which turn a request gets. A request's turn follows from
// its content, not from the order requests arrive in: turn k answers a request that carries the
// results of every tool call of turn k-1 (turn 0 answers one that carries none), so a CLI's retry,
// or a side request made before the conversation's first, gets the same answer again.
//
// The script file:
//   {"server": "kevo",                       the MCP server's name in the CLI's config
//    "turns": [{"tool_calls": [{"tool": "task", "arguments": {}}]},
//              {"tool_calls": [{"tool": "evaluate", "arguments": {"source": "..."}}]},
//              {"text": "done"}]}
// A call may also carry "raw_arguments" (its arguments' text, sent as it is) and "unoffered": true
// (a tool the request does not offer, called by that name).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/result.h"

namespace kevo::test {

struct ScriptedToolCall {
  std::string tool;          // the MCP tool's own name ("evaluate")
  nlohmann::json arguments;  // an object
  // A malformed call, as a model can send one: the arguments' text as it goes on the wire (not
  // JSON, or not an object), and a tool the request does not offer (the name sent as it is).
  std::optional<std::string> raw_arguments;
  bool unoffered = false;
  // The arguments' text on the wire.
  std::string wire_arguments() const { return raw_arguments ? *raw_arguments : arguments.dump(); }
};

struct ScriptedTurn {
  std::vector<ScriptedToolCall> tool_calls;  // empty: a final text
  std::string text;
};

struct ModelScript {
  std::string server = "kevo";
  std::vector<ScriptedTurn> turns;
};

// Errors name the field ("turns[2].tool_calls[0].arguments: not an object").
Result<ModelScript> parse_model_script(const nlohmann::json& j);
Result<ModelScript> load_model_script(const std::filesystem::path& file);

// The id of the i-th tool call of turn k, as one wire format spells it (prefix "toolu_", "call_").
std::string tool_call_id(const std::string& prefix, size_t turn, size_t i);

// The turn a request gets: the largest k whose predecessor's tool-call ids are all in `results`
// (the ids the request carries results for). nullopt: the request carries the results of the last
// turn's tool calls, past the end of the script.
std::optional<size_t> turn_for(const ModelScript& s, const std::string& id_prefix,
                               const std::vector<std::string>& results);

}  // namespace kevo::test
