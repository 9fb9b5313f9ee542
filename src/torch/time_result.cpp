#include "torch/time_result.h"

#include <fmt/format.h>

namespace kevo::torch {

namespace {

// The first line of an error, shortened for a one-line summary.
std::string first_line(const std::string& s, size_t max = 120) {
  std::string l = s.substr(0, s.find('\n'));
  if (l.size() > max) l = l.substr(0, max - 3) + "...";
  return l;
}

}  // namespace

std::optional<double> TimeResult::median_ms(const std::string& mode) const {
  auto it = modes.find(mode);
  if (it == modes.end() || !it->second.ok || !(it->second.median_ms > 0)) return std::nullopt;
  return it->second.median_ms;
}

std::string mode_label(const std::string& mode) { return mode == "compile" ? "torch.compile" : mode; }

std::optional<double> speedup_over(const TimeResult& r, const std::string& mode, double candidate_ms) {
  auto ms = r.median_ms(mode);
  if (!ms || !(candidate_ms > 0)) return std::nullopt;
  return *ms / candidate_ms;
}

nlohmann::json pytorch_json(const TimeResult& r) {
  using nlohmann::json;
  json j = {{"device", r.device}, {"device_name", r.device_name}};
  json errors = json::object(), modes = json::object();
  for (const char* m : kTimeModes) {
    auto ms = r.median_ms(m);
    j[std::string(m) + "_ms"] = ms ? json(*ms) : json(nullptr);
    auto it = r.modes.find(m);
    if (it == r.modes.end()) continue;
    const TimedMode& t = it->second;
    if (t.ok)
      modes[m] = {{"median_ms", t.median_ms}, {"ci_low_ms", t.ci_low_ms}, {"ci_high_ms", t.ci_high_ms},
                  {"min_ms", t.min_ms}, {"n", t.n}};
    else
      errors[m] = t.error.empty() ? std::string("not measured") : t.error;
  }
  j["errors"] = errors;
  j["modes"] = modes;
  return j;
}

std::string pytorch_line(const TimeResult& r, double candidate_ms) {
  return "vs PyTorch: " + pytorch_times(r, candidate_ms);
}

std::string pytorch_times(const TimeResult& r, double candidate_ms) {
  std::string s;
  for (const char* m : kTimeModes) {
    auto it = r.modes.find(m);
    if (it == r.modes.end()) continue;
    if (!s.empty()) s += ", ";
    const TimedMode& t = it->second;
    if (t.ok && t.median_ms > 0) {
      s += fmt::format("{} {:.4g} ms", mode_label(m), t.median_ms);
      if (auto x = speedup_over(r, m, candidate_ms)) s += fmt::format(" ({:.2f}x)", *x);
    } else {
      s += fmt::format("{} failed ({})", mode_label(m), first_line(t.error.empty() ? "not measured" : t.error));
    }
  }
  return s.empty() ? std::string("nothing measured") : s;
}

}  // namespace kevo::torch
