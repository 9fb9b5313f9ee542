// How kevo eval --oracle-check's report is shown: exit code, JSON and text (check/oracle_check.h).
#include <fmt/format.h>

#include "check/oracle_check.h"

#include "util/enum_text.h"

namespace kevo {

namespace {

constexpr EnumText<OracleCheckReason> kOracleCheckReasonTexts[] = {
    {OracleCheckReason::kOk, "ok"},
    {OracleCheckReason::kOracleFailed, "oracle_failed"},
    {OracleCheckReason::kInfraError, "infra_error"},
    {OracleCheckReason::kShapeMismatch, "shape_mismatch"},
    {OracleCheckReason::kNonFinite, "nonfinite"},
    {OracleCheckReason::kAllZero, "all_zero"},
    {OracleCheckReason::kUnwritten, "unwritten"},
    {OracleCheckReason::kNondeterministic, "nondeterministic"},
};

}  // namespace

std::string to_string(OracleCheckReason r) { return enum_text(kOracleCheckReasonTexts, r, "unknown"); }

int OracleCheckReport::exit_code() const {
  bool infra = configs.empty(), bad = false;  // nothing checked is no pass
  for (const auto& c : configs) {
    infra |= c.reason == OracleCheckReason::kInfraError;
    bad |= !c.ok();
  }
  return infra ? 20 : bad ? 11 : 0;
}

namespace {
nlohmann::json or_null(const std::optional<double>& x) { return x ? nlohmann::json(*x) : nlohmann::json(nullptr); }
}  // namespace

nlohmann::json OracleCheckReport::to_json() const {
  nlohmann::json cs = nlohmann::json::array();
  int ok = 0;
  for (const auto& c : configs) {
    ok += c.ok();
    cs.push_back({{"config", c.config}, {"held_out", c.held_out}, {"ok", c.ok()}, {"reason", to_string(c.reason)},
                  {"detail", c.detail}, {"oracle_seconds", c.oracle_seconds}, {"max_abs_diff", c.max_abs_diff}});
  }
  nlohmann::json j = {{"mode", "oracle_check"}, {"task", task}, {"oracle", oracle}, {"device_plane", device_plane},
                      {"seed", seed}, {"exit_code", exit_code()}, {"configs_ok", ok}, {"configs_total", configs.size()},
                      {"configs", cs}, {"seconds", seconds}};
  if (!device_plane) j["host_path_why"] = host_path_why;
  if (pytorch) {
    j["pytorch"] = torch::pytorch_json(*pytorch);
    j["eager_ms"] = or_null(pytorch->median_ms("eager"));
    j["compile_ms"] = or_null(pytorch->median_ms("compile"));
  } else {
    j["pytorch"] = nullptr;
    j["eager_ms"] = j["compile_ms"] = nullptr;
    j["pytorch_note"] = pytorch_note;
  }
  return j;
}

std::string OracleCheckReport::to_text() const {
  int ok = 0;
  for (const auto& c : configs) ok += c.ok();
  std::string s = fmt::format("oracle check of {} ({} oracle, {}): {}/{} configs ok\n", task, oracle,
                              device_plane ? "device data plane" : "host data path (" + host_path_why + ")", ok,
                              configs.size());
  for (const auto& c : configs)
    s += fmt::format("  {:<24} {:<17} {:8.3f} s{}{}\n", c.config + (c.held_out ? " (held out)" : ""), to_string(c.reason),
                     c.oracle_seconds, c.detail.empty() ? "" : "  ", c.detail);
  if (pytorch) s += "  PyTorch on the main config: " + torch::pytorch_times(*pytorch, 0) + "\n";
  else if (!pytorch_note.empty()) s += "  PyTorch not timed: " + pytorch_note + "\n";
  s += fmt::format("exit {} ({:.1f} s, seed {})\n", exit_code(), seconds, seed);
  return s;
}

}  // namespace kevo
