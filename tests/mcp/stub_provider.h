// A ToolProvider for the protocol tests: one tool `echo` {text: string, delay_ms?: integer} that
// answers its text (after the delay), and a resource. Counts calls and remembers how it closed.
#pragma once

#include <atomic>
#include <chrono>
#include <thread>

#include "mcp/tool.h"

namespace kevo::mcp::testing {

struct StubState {
  std::atomic<int> calls{0}, closes{0}, protocol_errors{-1}, running{0}, max_running{0};
  std::atomic<bool> closed_while_running{false}, expired{false};
  ClientInfo client;
  CloseReason why = CloseReason::kShutdown;
};

class StubProvider final : public ToolProvider {
 public:
  explicit StubProvider(StubState& s) : s_(s) {}
  std::vector<ToolSpec> tools() const override {
    nlohmann::json schema = {{"type", "object"},
                             {"properties", {{"text", {{"type", "string"}}}, {"delay_ms", {{"type", "integer"}, {"minimum", 0}}}}},
                             {"required", {"text"}},
                             {"additionalProperties", false}};
    return {{"echo", "Echo", "answers its text", schema, nlohmann::json(), true}};
  }
  ToolResult call(const std::string&, const nlohmann::json& args) override {
    int now = ++s_.running;
    for (int m = s_.max_running; now > m && !s_.max_running.compare_exchange_weak(m, now);) {}
    ++s_.calls;
    std::this_thread::sleep_for(std::chrono::milliseconds(args.value("delay_ms", 0)));
    ToolResult r;
    r.text = args["text"].get<std::string>();
    r.structured = {{"echo", r.text}};
    --s_.running;
    return r;
  }
  std::vector<ResourceSpec> resources() const override { return {{"stub://a", "a", "a resource", "text/plain"}}; }
  std::optional<std::string> read_resource(const std::string& uri) override {
    if (uri == "stub://a") return std::string("contents of a");
    return std::nullopt;
  }
  void on_initialized(const ClientInfo& c) override { s_.client = c; }
  bool expired() const override { return s_.expired; }
  void close(CloseReason why, int errors) override {
    if (s_.running > 0) s_.closed_while_running = true;
    s_.why = why;
    s_.protocol_errors = errors;
    ++s_.closes;
  }

 private:
  StubState& s_;
};

inline nlohmann::json initialize_msg(int id = 1, const std::string& version = "2025-11-25") {
  return {{"jsonrpc", "2.0"},
          {"id", id},
          {"method", "initialize"},
          {"params", {{"protocolVersion", version}, {"capabilities", nlohmann::json::object()},
                      {"clientInfo", {{"name", "stub-client"}, {"version", "1.0"}}}}}};
}

inline nlohmann::json call_msg(int id, const std::string& tool, nlohmann::json args) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"method", "tools/call"}, {"params", {{"name", tool}, {"arguments", args}}}};
}

}  // namespace kevo::mcp::testing
