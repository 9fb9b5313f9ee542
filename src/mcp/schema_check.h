// Checks a tool call's arguments against the tool's input schema, so a provider is only ever called
// with what it declared. It covers the subset kevo's tool schemas use: an object with typed
// properties (string, integer, number, boolean, array, object), `required`, `enum` of strings,
// `minimum` for integers, and `additionalProperties: false`.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kevo::mcp {

// nullopt when the arguments fit; otherwise what is wrong, naming the field
// ("argument 'source' must be a string, not a number").
std::optional<std::string> argument_error(const nlohmann::json& schema, const nlohmann::json& args);

}  // namespace kevo::mcp
