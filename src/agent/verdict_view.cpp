#include "agent/verdict_view.h"

#include <fmt/format.h>

#include "evolve/task_context.h"

namespace kevo::agent {

using nlohmann::json;

namespace {

std::string clip(std::string s, size_t n) {
  if (s.size() > n) s = s.substr(0, n) + "\n[... trimmed]";
  return s;
}

json kernels_json(const CompileResult& c) {
  json ks = json::array();
  for (const auto& k : c.kernels)
    ks.push_back({{"name", k.function}, {"registers", k.registers}, {"shared_bytes", k.shared_bytes},
                  {"stack_bytes", k.stack_bytes}, {"spill_bytes", k.spill_store_bytes + k.spill_load_bytes}});
  return ks;
}

json timing_json(const Timing& t) {
  json j = {{"candidate_ms", t.candidate.median}, {"speedup", t.speedup.value},
            {"speedup_ci", {t.speedup.lo, t.speedup.hi}}};
  if (t.has_baseline) j["baseline_ms"] = t.baseline.median;
  if (t.floor.floor_ms > 0) {
    j["sol_floor_ms"] = t.floor.floor_ms;
    j["sol_fraction"] = t.sol_fraction;
    j["sol_bound"] = t.floor.bound;
  }
  return j;
}

json configs_json(const Verdict& v, const Task& task, const std::vector<std::string>& paths) {
  json cs = json::array();
  for (const auto& c : v.configs) {
    if (c.held_out) continue;
    json j = {{"config", c.config}, {"ok", c.ok}, {"max_abs_err", c.max_abs_err}, {"max_rel_err", c.max_rel_err}};
    if (!c.detail.empty()) j["detail"] = clip(scrub_text(c.detail, task, paths), 2000);
    cs.push_back(j);
  }
  return cs;
}

// What failed first, in the words the repair loop sends a model.
std::string feedback(const Verdict& v, const json& compile, const json& configs) {
  if (v.outcome == Outcome::CompileError) return "The compiler said:\n" + compile.value("diagnostics", v.message);
  if (v.outcome == Outcome::Incorrect)
    for (const auto& c : configs)
      if (!c.value("ok", true) && c.contains("detail")) return "Wrong results. First mismatch:\n" + c["detail"].get<std::string>();
  return "";
}

}  // namespace

std::string scrub_text(std::string text, const Task& task, const std::vector<std::string>& paths) {
  for (const auto& p : paths) {
    if (p.size() < 2) continue;
    for (size_t at = text.find(p); at != std::string::npos; at = text.find(p, at + 1)) text.replace(at, p.size(), "<dir>");
  }
  return evolve::scrub_held_out(std::move(text), task);
}

json compile_view(const Verdict& v, const Task& task, const std::vector<std::string>& paths) {
  json j = {{"ok", v.compile ? v.compile->ok : v.outcome != Outcome::CompileError}};
  if (v.compile) {
    if (!v.compile->diagnostics.empty()) j["diagnostics"] = clip(scrub_text(v.compile->diagnostics, task, paths), 6000);
    j["kernels"] = kernels_json(*v.compile);
    j["arch"] = v.compile->arch_used;
    j["seconds"] = v.compile->seconds;
  }
  if (!j["ok"].get<bool>() && !j.contains("diagnostics")) j["diagnostics"] = clip(scrub_text(v.message, task, paths), 6000);
  return j;
}

json verdict_view(const Verdict& v, const Task& task, const std::vector<std::string>& paths) {
  json j = {{"outcome", outcome_name(v.outcome)}, {"reason", v.reason_text()},
            {"message", clip(scrub_text(v.message, task, paths), 2000)}};
  j["compile"] = compile_view(v, task, paths);
  j["configs"] = configs_json(v, task, paths);
  if (v.timing && v.outcome == Outcome::Pass) j["timing"] = timing_json(*v.timing);
  json flags = json::array();
  for (const auto& f : v.flags) flags.push_back(f.reason_text());
  if (!flags.empty()) j["flags"] = flags;
  if (std::string f = feedback(v, j["compile"], j["configs"]); !f.empty()) j["feedback"] = clip(f, 4000);
  return j;
}

std::string verdict_lines(const json& view) {
  std::string s = fmt::format("{} ({})", view.value("outcome", "?"), view.value("reason", "?"));
  if (auto m = view.value("message", ""); !m.empty()) s += ": " + m;
  s += "\n";
  if (view.contains("timing")) {
    const json& t = view["timing"];
    s += fmt::format("speedup {:.3f}x [95% CI {:.3f} - {:.3f}], {:.4g} ms", t.value("speedup", 0.0),
                     t["speedup_ci"][0].get<double>(), t["speedup_ci"][1].get<double>(), t.value("candidate_ms", 0.0));
    if (t.contains("baseline_ms")) s += fmt::format(" against the baseline's {:.4g} ms", t["baseline_ms"].get<double>());
    if (t.contains("sol_fraction")) s += fmt::format("; {:.0f}% of speed of light", 100 * t["sol_fraction"].get<double>());
    s += "\n";
  }
  if (view.contains("feedback")) s += view["feedback"].get<std::string>() + "\n";
  if (view.contains("flags")) s += "flags: " + view["flags"].dump() + "\n";
  return s;
}

}  // namespace kevo::agent
