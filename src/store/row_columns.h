// Internal to store/: what the two backends (sqlite_run_db, pg_run_db) share about a row: the
// column lists of runs and candidates, in one order, and the reading of a row in that order from
// either backend's cursor, so that a new column is added once for both.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/archive_row.h"
#include "store/records.h"

namespace kevo::store::detail {

inline constexpr const char* kCandidateColumns =
    "id, run_id, seq, generation, island, repair_round, operator, parents, model, prompt, answer, "
    "name, rationale, source, outcome, reason, message, compile, verdict, features, flags, "
    "speedup, speedup_lo, speedup_hi, time_ms, accepted, created_at";

inline constexpr const char* kRunColumns =
    "id, created_at, updated_at, task, task_dir, strategy, config, status, stop_reason, "
    "best_candidate, best_speedup, baseline, final, note";

// The archive's columns after id, in the order add_archive binds them.
inline constexpr const char* kArchiveInsertColumns =
    "fingerprint, kind, task, gpu, arch, config, features, name, rationale, source, diff, run_id, "
    "candidate_id, parent_id, speedup, speedup_lo, speedup_hi, time_ms, baseline_ms, sol_before, "
    "sol_after, held_out, fake, origin, created_at";
inline constexpr int kArchiveInsertCount = 25;
// Read back: every column, or (light) the large texts left empty.
inline constexpr const char* kArchiveColumns =
    "id, fingerprint, kind, task, gpu, arch, config, features, name, rationale, source, diff, run_id, "
    "candidate_id, parent_id, speedup, speedup_lo, speedup_hi, time_ms, baseline_ms, sol_before, "
    "sol_after, held_out, fake, origin, created_at";
inline constexpr const char* kArchiveLightColumns =
    "id, fingerprint, kind, task, gpu, arch, config, features, name, '', '', '', run_id, "
    "candidate_id, parent_id, speedup, speedup_lo, speedup_hi, time_ms, baseline_ms, sol_before, "
    "sol_after, held_out, fake, origin, created_at";

// A candidate's parents as stored: a JSON array of ids.
inline std::string ids_json(const std::vector<int64_t>& v) { return nlohmann::json(v).dump(); }
// The ids of a stored array; anything else in it (or damaged text) is left out.
inline std::vector<int64_t> ids_from(const std::string& s) {
  auto j = nlohmann::json::parse(s, nullptr, false);
  std::vector<int64_t> out;
  if (j.is_array())
    for (const auto& x : j)
      if (x.is_number_integer()) out.push_back(x.get<int64_t>());
  return out;
}

// `Cursor` reads the next column of a row: int64(), int32(), real(), text(), flag().
template <class Cursor>
CandidateRow read_candidate_columns(Cursor c) {
  CandidateRow r;
  r.id = c.int64();
  r.run_id = c.int64();
  r.seq = c.int32();
  r.generation = c.int32();
  r.island = c.int32();
  r.repair_round = c.int32();
  r.op = c.text();
  r.parents = ids_from(c.text());
  r.model = c.text();
  r.prompt = c.text();
  r.answer = c.text();
  r.name = c.text();
  r.rationale = c.text();
  r.source = c.text();
  r.outcome = candidate_outcome_or_unknown(c.text());
  r.reason = c.text();
  r.message = c.text();
  r.compile_json = c.text();
  r.verdict_json = c.text();
  r.features_json = c.text();
  r.flags_json = c.text();
  r.speedup = c.real();
  r.speedup_lo = c.real();
  r.speedup_hi = c.real();
  r.time_ms = c.real();
  r.accepted = c.flag();
  r.created_at = c.real();
  return r;
}

template <class Cursor>
ArchiveRow read_archive_columns(Cursor c) {
  ArchiveRow r;
  r.id = c.int64();
  r.fingerprint = c.text();
  // Text a newer kevo wrote reads as an improvement that was not checked: never shown as verified.
  auto kind = parse_archive_kind(c.text());
  r.kind = kind.value_or(ArchiveKind::kImprovement);
  r.task = c.text();
  r.gpu = c.text();
  r.arch = c.text();
  r.config = c.text();
  r.features_json = c.text();
  r.name = c.text();
  r.rationale = c.text();
  r.source = c.text();
  r.diff = c.text();
  r.run_id = c.int64();
  r.candidate_id = c.int64();
  r.parent_id = c.int64();
  r.speedup = c.real();
  r.speedup_lo = c.real();
  r.speedup_hi = c.real();
  r.time_ms = c.real();
  r.baseline_ms = c.real();
  r.sol_before = c.real();
  r.sol_after = c.real();
  r.held_out = parse_held_out(c.text()).value_or(HeldOut::kFailed);  // unknown text: never shown
  r.fake = c.flag();
  r.origin = c.text();
  r.created_at = c.real();
  return r;
}

template <class Cursor>
RunRow read_run_columns(Cursor c) {
  RunRow r;
  r.id = c.int64();
  r.created_at = c.real();
  r.updated_at = c.real();
  r.task = c.text();
  r.task_dir = c.text();
  r.strategy = c.text();
  r.config_json = c.text();
  r.status = parse_run_status(c.text()).value_or(RunStatus::kRunning);  // a newer kevo's status: running
  r.stop_reason = c.text();
  r.best_candidate = c.int64();
  r.best_speedup = c.real();
  r.baseline_json = c.text();
  r.final_json = c.text();
  r.note = c.text();
  return r;
}

}  // namespace kevo::store::detail
