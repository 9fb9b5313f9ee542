// An archive entry as the run database keeps it: a verified winner or a notable improvement of one
// run, kept across runs and campaigns so later runs of other tasks can be shown it as an example
// (archive/ reads and writes these rows; docs/SUITE.md, "The kernel archive", describes them).
// Plain data, like records.h: the task's features stay JSON text the archive module parses.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kevo::store {

enum class ArchiveKind {
  kWinner,       // a run's winner: passed held-out verification and beat the baseline
  kImprovement,  // a new best of the search that raised the best speedup by a notable step
};
const char* to_string(ArchiveKind k);  // "winner", "improvement"
std::optional<ArchiveKind> parse_archive_kind(std::string_view text);

// What held-out verification said of the entry's kernel; retrieval never shows kFailed.
enum class HeldOut { kPassed, kFailed, kNotChecked };
const char* to_string(HeldOut h);  // "passed", "failed", "not_checked"
std::optional<HeldOut> parse_held_out(std::string_view text);

struct ArchiveRow {
  int64_t id = 0;
  // sha256 of task, GPU and source: the same kernel measured on the same GPU is one entry, so an
  // import of an archive already imported adds nothing.
  std::string fingerprint;
  ArchiveKind kind = ArchiveKind::kWinner;
  std::string task;      // the task's name
  std::string gpu, arch;  // where the speedup was measured
  std::string config;    // the timed config: "main (N=1048576)"
  std::string features_json;  // the task's features (archive/task_features.h)
  std::string name, rationale;  // the model's name for the kernel and its stated idea
  std::string source;    // the kernel
  std::string diff;      // against its parent (the baseline when it had none), unified
  int64_t run_id = 0, candidate_id = 0, parent_id = 0;  // in the database it was made in (0: baseline parent)
  double speedup = 0, speedup_lo = 0, speedup_hi = 0;
  double time_ms = 0, baseline_ms = 0;
  double sol_before = 0, sol_after = 0;  // the baseline's and the kernel's SOL fraction (0: unknown)
  HeldOut held_out = HeldOut::kNotChecked;
  bool fake = false;     // measured by the marker evaluator: shown only to fake runs
  std::string origin;    // "run 12 of /path/runs.db", "imported from lab.jsonl line 3"
  double created_at = 0;
};

}  // namespace kevo::store
