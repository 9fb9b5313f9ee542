#include "agent/tool_dispatch.h"

#include <fmt/format.h>

#include "mcp/schema_check.h"

namespace kevo::agent {

using nlohmann::json;

namespace {

// Large fields (kernel sources) are kept in the transcript by size, not in full: each attempt's
// source is its candidate's row already.
json shown(const json& args) {
  if (!args.is_object()) return args;
  json out = json::object();
  for (const auto& [k, v] : args.items())
    out[k] = v.is_string() && v.get_ref<const std::string&>().size() > 200
                 ? json(fmt::format("<{} bytes>", v.get_ref<const std::string&>().size()))
                 : v;
  return out;
}

DispatchedCall refused(const llm::ToolCall& call, std::string why, json args) {
  DispatchedCall d;
  d.tool = call.name;
  d.malformed = true;
  d.shown_arguments = shown(args);
  d.result = {call.id, std::move(why), true};
  return d;
}

std::string tool_list(const std::vector<mcp::ToolSpec>& specs) {
  std::string s;
  for (const auto& t : specs) s += (s.empty() ? "" : ", ") + t.name;
  return s;
}

}  // namespace

std::vector<llm::ToolDef> tool_defs(const std::vector<mcp::ToolSpec>& specs) {
  std::vector<llm::ToolDef> defs;
  for (const auto& t : specs) defs.push_back({t.name, t.description, t.input_schema.dump()});
  return defs;
}

DispatchedCall dispatch_tool_call(mcp::ToolProvider& tools, const std::vector<mcp::ToolSpec>& specs,
                                  const llm::ToolCall& call) {
  json args = json::parse(call.arguments, nullptr, false);
  if (!call.arguments_valid || args.is_discarded() || !args.is_object())
    return refused(call, fmt::format("the arguments of {} are not a JSON object: {:.200}", call.name, call.arguments),
                   json(call.arguments.substr(0, 200)));
  const mcp::ToolSpec* spec = nullptr;
  for (const auto& t : specs)
    if (t.name == call.name) spec = &t;
  if (!spec) return refused(call, fmt::format("there is no tool '{}' (tools: {})", call.name, tool_list(specs)), args);
  if (auto bad = mcp::argument_error(spec->input_schema, args))
    return refused(call, fmt::format("{}: {}", call.name, *bad), args);
  mcp::ToolResult r = tools.call(call.name, args);
  DispatchedCall d;
  d.tool = call.name;
  d.shown_arguments = shown(args);
  d.structured = r.structured;
  d.result = {call.id, r.text, r.is_error};  // each wire format marks an error its own way
  return d;
}

}  // namespace kevo::agent
