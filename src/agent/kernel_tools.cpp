#include "agent/kernel_tools.h"

#include <fmt/format.h>

#include "agent/verdict_view.h"
#include "evolve/prompts.h"

namespace kevo::agent {

using nlohmann::json;

namespace {

json object_schema(json properties, json required = json::array()) {
  return {{"type", "object"}, {"properties", std::move(properties)}, {"required", std::move(required)},
          {"additionalProperties", false}};
}

const json kSource = {{"type", "string"}, {"description", "the whole .cu file, in the kevo ABI (see the task tool)"}};
const json kCandidate = {{"type", "integer"}, {"minimum", 1}, {"description", "a candidate id an evaluate call returned"}};

mcp::ToolResult error_of(const ToolError& e) { return mcp::ToolResult::error(e.message); }

mcp::ToolResult json_result(json structured, std::string text) {
  mcp::ToolResult r;
  r.structured = std::move(structured);
  r.text = std::move(text);
  return r;
}

std::string budget_line(const SessionBudgets& b) {
  return fmt::format("Budgets of this session: {} evaluations, {:.0f} GPU seconds, {:.0f} s wall time, {} at once, "
                     "{} submissions, sources up to {} KiB.",
                     b.evaluations, b.gpu_seconds, b.wall_seconds, b.parallel, b.submissions, b.source_bytes >> 10);
}

std::string history_text(const json& h) {
  std::string s;
  for (const auto& a : h["attempts"])
    s += fmt::format("#{} turn {} {} {}: {} {:.3f}x\n", a["candidate"].get<int64_t>(), a["turn"].get<int>(),
                     a["tool"].get<std::string>(), a["name"].get<std::string>(), a["outcome"].get<std::string>(),
                     a["speedup"].get<double>());
  if (s.empty()) s = "no attempts yet\n";
  s += fmt::format("best: #{} ({:.3f}x); winner (verified): {}\n", h["best"]["candidate"].get<int64_t>(),
                   h["best"]["speedup"].get<double>(), h["winner"].get<int64_t>());
  return s + "spent: " + h["spent"].dump() + "\n";
}

}  // namespace

std::string server_instructions() {
  return "kevo checks CUDA kernels and times them against a baseline, in processes a kernel cannot reach. Call "
         "`task` first: it gives what to compute, the ABI every kernel must follow, the shapes, the baseline's code "
         "and time, and the speed-of-light floor. `compile` reports diagnostics and registers; `evaluate` runs the "
         "full check on the visible shapes and times the kernel (each call is recorded); `profile` adds Nsight "
         "Compute's view of a passing kernel; `history` lists the attempts; `submit` verifies one on other shapes "
         "you do not see, with fresh inputs. Only a submitted kernel that passes that verification and is faster "
         "than the baseline counts.";
}

std::vector<mcp::ToolSpec> KernelTools::tools() const {
  std::vector<mcp::ToolSpec> t;
  t.push_back({"task", "The task", "What to compute, the kernel ABI, shapes, the baseline and its time, the speed-of-light floor, the budgets.",
               object_schema(json::object()), json(), true});
  t.push_back({"compile", "Compile a kernel", "Compiles a source: the compiler's diagnostics and each kernel's registers, shared memory and spills. Runs nothing.",
               object_schema({{"source", kSource}}, {"source"}), json(), true});
  t.push_back({"evaluate", "Evaluate a kernel",
               "Checks a source on the visible shapes with fresh inputs and times it against the baseline: outcome, reason, "
               "speedup with its 95% interval, fraction of speed of light, the first mismatch. Recorded as a candidate; returns its id.",
               object_schema({{"source", kSource},
                              {"name", {{"type", "string"}, {"description", "a short name for this attempt"}}},
                              {"idea", {{"type", "string"}, {"description", "what this attempt tries, in a sentence"}}}},
                             {"source"}),
               json(), false});
  t.push_back({"profile", "Profile a kernel", "Evaluates a passing candidate (by id) or a source again with Nsight Compute: the diagnosis and per-kernel metrics.",
               object_schema({{"candidate", kCandidate}, {"source", kSource}}), json(), false});
  t.push_back({"history", "The session's attempts", "Every attempt of this session with its outcome and speedup, the best, the submissions and the budgets spent.",
               object_schema(json::object()), json(), true});
  t.push_back({"submit", "Submit the answer",
               "Verifies a passing candidate (by id) or a new source on held-out shapes with fresh inputs and times it again. "
               "The session's result is this verification's verdict.",
               object_schema({{"candidate", kCandidate}, {"source", kSource}}), json(), false});
  return t;
}

mcp::ToolResult KernelTools::attempt_result(const ToolResultOr<Attempt>& a) const {
  if (auto* e = std::get_if<ToolError>(&a)) return error_of(*e);
  const Attempt& at = std::get<Attempt>(a);
  std::string text = fmt::format("candidate #{} (turn {}): {}", at.candidate, at.turn, verdict_lines(at.view));
  if (at.view.contains("profile")) text += "profile: " + at.view["profile"].value("diagnosis", at.view["profile"].value("note", "")) + "\n";
  return json_result(at.view, text);
}

mcp::ToolResult KernelTools::call(const std::string& name, const json& args) {
  auto str = [&](const char* k) { return args.contains(k) ? args[k].get<std::string>() : std::string(); };
  const int64_t cand = args.contains("candidate") ? args["candidate"].get<int64_t>() : 0;
  if (name == "task") {
    json v = session_->task_view();
    return json_result(v, evolve::task_context_text(session_->context()) + budget_line(session_->budgets()));
  }
  if (name == "compile") {
    auto r = session_->compile(str("source"));
    if (auto* e = std::get_if<ToolError>(&r)) return error_of(*e);
    const json& c = std::get<json>(r);
    return json_result(c, (c["ok"].get<bool>() ? "compiled\n" : "did not compile\n") + c.value("diagnostics", "") +
                              "\nkernels: " + c.value("kernels", json::array()).dump());
  }
  if (name == "evaluate") return attempt_result(session_->evaluate(str("source"), str("name"), str("idea")));
  if ((name == "profile" || name == "submit") && (str("source").empty() == (cand == 0)))
    return mcp::ToolResult::error("give exactly one of 'candidate' and 'source'");
  if (name == "profile") return attempt_result(session_->profile(str("source"), cand));
  if (name == "history") {
    json h = session_->history();
    return json_result(h, history_text(h));
  }
  if (name == "submit") {
    auto r = session_->submit(str("source"), cand);
    if (auto* e = std::get_if<ToolError>(&r)) return error_of(*e);
    const json& s = std::get<json>(r);
    return json_result(s, s.dump());
  }
  return mcp::ToolResult::error("unknown tool " + name);
}

std::vector<mcp::ResourceSpec> KernelTools::resources() const {
  return {{"kevo://task", "task", "the task as the task tool gives it", "text/markdown"},
          {"kevo://abi", "abi", "the rules every candidate kernel follows", "text/markdown"},
          {"kevo://baseline.cu", "baseline.cu", "the baseline kernel, correct and to be beaten", "text/x-cuda"}};
}

std::optional<std::string> KernelTools::read_resource(const std::string& uri) {
  const auto& c = session_->context();
  if (uri == "kevo://task") return evolve::task_context_text(c);
  if (uri == "kevo://abi") return c.abi_text;
  if (uri == "kevo://baseline.cu") return c.baseline_code;
  return std::nullopt;
}

void KernelTools::on_initialized(const mcp::ClientInfo& client) { session_->set_client(client.name, client.version); }

void KernelTools::close(mcp::CloseReason why, int protocol_errors) {
  const SessionEnd end = session_->expired()                  ? SessionEnd::kWallTime
                         : why == mcp::CloseReason::kClientGone ? SessionEnd::kClientGone
                                                                : SessionEnd::kShutdown;
  session_->finish(end, protocol_errors);
}

}  // namespace kevo::agent
