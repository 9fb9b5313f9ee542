#include "results/verdict_view.h"

#include "results/stored_json.h"
#include "util/enum_text.h"

namespace kevo::results {

using nlohmann::json;

namespace {

std::optional<std::pair<double, double>> pair_at(const json& j, const char* key) {
  const json& a = member(j, key);
  if (!a.is_array() || a.size() != 2 || !a[0].is_number() || !a[1].is_number()) return std::nullopt;
  return std::pair{a[0].get<double>(), a[1].get<double>()};
}

const json& array_at(const json& j, const char* key) {
  static const json empty = json::array();
  const json& a = member(j, key);
  return a.is_array() ? a : empty;
}

std::map<std::string, double> seconds_at(const json& j, const char* key) {
  std::map<std::string, double> out;
  const json& o = member(j, key);
  if (o.is_object())
    for (const auto& [name, sec] : o.items())
      if (sec.is_number()) out[name] = sec.get<double>();
  return out;
}

SummaryView summary_of(const json& j) {
  return {integer(j, "n"), number(j, "median_ms"), number(j, "mean_ms"), number(j, "min_ms"),
          number(j, "max_ms"), number(j, "iqr_ms"), number(j, "cv"), pair_at(j, "median_ci_ms")};
}

PytorchTimes pytorch_of(const json& p) {
  return {positive(p, "eager_ms"), positive(p, "compile_ms"), positive(p, "extension_ms"), text(p, "skipped")};
}

TimingView timing_of(const json& t) {
  TimingView v;
  v.config = text(t, "config");
  v.candidate = summary_of(member(t, "candidate"));
  if (member(t, "baseline").is_object()) v.baseline = summary_of(member(t, "baseline"));
  v.speedup = number(member(t, "speedup"), "value");
  v.speedup_ci95 = pair_at(member(t, "speedup"), "ci95");
  v.floor_ms = number(t, "floor_ms");
  v.sol_fraction = number(t, "sol_fraction");
  v.impossible_below_ms = number(t, "impossible_below_ms");
  v.events_median_ms = number(t, "events_median_ms");
  v.bound = text(t, "bound");
  v.outside_clock = member(t, "outside_clock");
  if (member(t, "pytorch").is_object()) v.pytorch = pytorch_of(member(t, "pytorch"));
  return v;
}

CompileView compile_of(const json& c) {
  return {flag(c, "ok"), flag(c, "cache_hit"), number(c, "seconds"), text(c, "arch"), text(c, "driver"),
          text(c, "diagnostics"), static_cast<int64_t>(array_at(c, "kernels").size())};
}

ConfigView config_of(const json& c) {
  return {text(c, "config"), flag(c, "held_out"), flag(c, "ok", true),
          parse_against(text(c, "against")).value_or(Against::kOracle), integer(c, "draws"),
          number(c, "max_abs_err"), number(c, "max_rel_err"), number(c, "seconds"), text(c, "detail")};
}

}  // namespace

namespace {

constexpr EnumText<Against> kAgainstTexts[] = {{Against::kOracle, "oracle"}, {Against::kConsistency, "consistency"}};

}  // namespace

const char* to_string(Against a) { return enum_text(kAgainstTexts, a, "oracle"); }

std::optional<Against> parse_against(std::string_view text) { return enum_parse(kAgainstTexts, text); }

VerdictView verdict_view(const json& j) {
  VerdictView v;
  v.outcome = store::candidate_outcome_or_unknown(text(j, "outcome"));
  v.reason = text(j, "reason");
  v.message = text(j, "message");
  v.task = text(j, "task");
  v.candidate = text(j, "candidate");
  v.seed = member(j, "seed").is_number_unsigned() ? member(j, "seed").get<uint64_t>() : 0;
  v.seconds = number(j, "seconds");
  if (member(j, "compile").is_object()) v.compile = compile_of(member(j, "compile"));
  for (const auto& c : array_at(j, "configs")) v.configs.push_back(config_of(c));
  if (member(j, "timing").is_object()) v.timing = timing_of(member(j, "timing"));
  for (const auto& f : array_at(j, "flags")) v.flags.push_back({text(f, "reason"), text(f, "detail")});
  if (const json& d = member(j, "device"); d.is_object()) v.device = DeviceView{text(d, "name"), text(d, "uuid")};
  v.sanitizer = text(j, "sanitizer");
  v.profile = member(j, "profile");
  v.isolation = member(j, "isolation");
  v.phases = seconds_at(j, "phases");
  v.work_seconds = seconds_at(j, "work_seconds");
  return v;
}

VerdictView verdict_view(const std::string& stored_text) { return verdict_view(parse_object(stored_text)); }

}  // namespace kevo::results
