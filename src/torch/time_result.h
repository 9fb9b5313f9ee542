// PyTorch-side times of a task (eager, torch.compile, the task's PyTorch extension) and how kevo
// shows them next to a kernel's time: in `kevo eval`'s JSON and text, and in bench records.
#pragma once

#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kevo::torch {

// The modes the bridge times, in display order.
inline constexpr const char* kTimeModes[] = {"eager", "compile", "extension"};

struct TimedMode {
  bool ok = false;
  std::string error;  // when !ok (e.g. torch.compile missing in torch < 2.0, the extension does not build)
  double median_ms = 0, ci_low_ms = 0, ci_high_ms = 0, min_ms = 0;
  int n = 0;
};

struct TimeResult {
  std::string device;       // "cuda" or "cpu"
  std::string device_name;  // "NVIDIA H100 80GB HBM3", "CPU: ..."
  std::map<std::string, TimedMode> modes;  // the modes asked for, measured or not
  // The mode's median when it was measured.
  std::optional<double> median_ms(const std::string& mode) const;
};

// How a mode is named to people: "eager", "torch.compile", "extension".
std::string mode_label(const std::string& mode);
// mode's median / candidate_ms (how many times faster the candidate is), when both are known.
std::optional<double> speedup_over(const TimeResult& r, const std::string& mode, double candidate_ms);

// {"device", "device_name", "eager_ms", "compile_ms", "extension_ms" (null where not measured),
//  "errors": {mode: message} for the modes that failed, "modes": {mode: {median_ms, ci_low_ms,
//  ci_high_ms, min_ms, n}} for those measured}.
nlohmann::json pytorch_json(const TimeResult& r);
// One line: "vs PyTorch: eager 1.234 ms (2.10x), torch.compile 0.987 ms (1.68x), extension 1.1 ms
// (1.90x)"; a failed mode reads "torch.compile failed (first line of the error)". With
// candidate_ms <= 0 the times come without speedups.
std::string pytorch_line(const TimeResult& r, double candidate_ms);
// The same without the "vs PyTorch: " prefix.
std::string pytorch_times(const TimeResult& r, double candidate_ms);

}  // namespace kevo::torch
