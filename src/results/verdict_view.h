// A candidate's verdict as the run database stores it (CandidateRow::verdict_json, a job result's
// "verdict"; the format is docs/VERDICT.md, written by check's Verdict::to_json), read into plain
// data for the read side: bench tables, the report and `kevo serve`. The reader sits below the
// checker and so keeps what it cannot name as the stored text (the reason code) or as JSON (the
// profile, the isolation record, the outside clock's batches). A verdict written by an older kevo
// reads with its missing fields at their defaults. Thread-safety: pure functions, plain data.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/records.h"

namespace kevo::results {

// What a config's outputs were checked against (check/verdict.h CheckedAgainst).
enum class Against { kOracle, kConsistency };
const char* to_string(Against a);                            // "oracle", "consistency"
std::optional<Against> parse_against(std::string_view text);  // nullopt for other text

struct ConfigView {
  std::string config;
  bool held_out = false, ok = true;
  Against against = Against::kOracle;
  int64_t draws = 0;
  double max_abs_err = 0, max_rel_err = 0, seconds = 0;
  std::string detail;
};

// A timing summary (time/stats.h Summary) in milliseconds.
struct SummaryView {
  int64_t n = 0;
  double median_ms = 0, mean_ms = 0, min_ms = 0, max_ms = 0, iqr_ms = 0, cv = 0;
  std::optional<std::pair<double, double>> median_ci_ms;
};

// The task's PyTorch side on the timed config; nullopt where it was not measured.
struct PytorchTimes {
  std::optional<double> eager_ms, compile_ms, extension_ms;
  std::string skipped;  // why PyTorch was not timed, when it was asked for and was not
};

struct TimingView {
  std::string config;
  SummaryView candidate;
  std::optional<SummaryView> baseline;  // absent: timed without a baseline
  double speedup = 0;
  std::optional<std::pair<double, double>> speedup_ci95;
  double floor_ms = 0, sol_fraction = 0, impossible_below_ms = 0, events_median_ms = 0;
  std::string bound;            // "memory" or "compute"; empty in a verdict without a floor
  nlohmann::json outside_clock;  // the checker's clock, as stored (null when absent)
  std::optional<PytorchTimes> pytorch;  // absent: PyTorch was not asked for
};

struct FlagView {
  std::string reason;  // check/reason.h's text ("hidden_work", "static:stream_create")
  std::string detail;
};

struct CompileView {
  bool ok = false, cache_hit = false;
  double seconds = 0;
  std::string arch, driver, diagnostics;
  int64_t kernels = 0;  // kernels the compile listed
};

struct DeviceView {
  std::string name, uuid;
};

struct VerdictView {
  store::CandidateOutcome outcome = store::CandidateOutcome::kUnknown;  // kUnknown: missing or new text
  std::string reason;  // "" on pass
  std::string message, task, candidate;
  uint64_t seed = 0;
  double seconds = 0;
  std::optional<CompileView> compile;
  std::vector<ConfigView> configs;
  std::optional<TimingView> timing;
  std::vector<FlagView> flags;
  std::optional<DeviceView> device;
  std::string sanitizer;
  nlohmann::json profile;    // check/kernel_profile.h Profile::to_json; null when absent
  nlohmann::json isolation;  // check/isolation.h Isolation::to_json; null when absent
  std::map<std::string, double> phases, work_seconds;

  double sol_fraction() const { return timing ? timing->sol_fraction : 0; }
};

VerdictView verdict_view(const nlohmann::json& j);
VerdictView verdict_view(const std::string& stored_text);  // "" or damaged text: the defaults

}  // namespace kevo::results
