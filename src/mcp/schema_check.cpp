#include "mcp/schema_check.h"

#include <fmt/format.h>

namespace kevo::mcp {

using nlohmann::json;

namespace {

bool has_type(const json& v, const std::string& type) {
  if (type == "string") return v.is_string();
  if (type == "integer") return v.is_number_integer();
  if (type == "number") return v.is_number();
  if (type == "boolean") return v.is_boolean();
  if (type == "array") return v.is_array();
  if (type == "object") return v.is_object();
  return true;  // a type this check does not know constrains nothing
}

std::string type_of(const json& v) { return v.is_number_integer() ? "integer" : v.type_name(); }

std::optional<std::string> property_error(const std::string& key, const json& prop, const json& v) {
  const std::string type = prop.value("type", "");
  if (!type.empty() && !has_type(v, type))
    return fmt::format("argument '{}' must be {} {}, not {}", key, type == "integer" ? "an" : "a", type, type_of(v));
  if (prop.contains("enum") && prop["enum"].is_array() && std::find(prop["enum"].begin(), prop["enum"].end(), v) == prop["enum"].end())
    return fmt::format("argument '{}' must be one of {}", key, prop["enum"].dump());
  if (v.is_number() && prop.contains("minimum") && v.get<double>() < prop["minimum"].get<double>())
    return fmt::format("argument '{}' must be at least {}", key, prop["minimum"].dump());
  return std::nullopt;
}

}  // namespace

std::optional<std::string> argument_error(const json& schema, const json& args) {
  if (!args.is_object()) return fmt::format("the arguments must be an object, not {}", type_of(args));
  const json props = schema.value("properties", json::object());
  for (const auto& r : schema.value("required", json::array()))
    if (r.is_string() && !args.contains(r.get<std::string>()))
      return fmt::format("argument '{}' is required", r.get<std::string>());
  const bool closed = schema.contains("additionalProperties") && schema["additionalProperties"] == false;
  for (const auto& [key, v] : args.items()) {
    auto p = props.find(key);
    if (p == props.end()) {
      if (closed) return fmt::format("unknown argument '{}' (this tool takes: {})", key, [&] {
          std::string names;
          for (const auto& [k, _] : props.items()) names += (names.empty() ? "" : ", ") + k;
          return names.empty() ? std::string("none") : names;
        }());
      continue;
    }
    if (auto e = property_error(key, *p, v)) return e;
  }
  return std::nullopt;
}

}  // namespace kevo::mcp
