// Fuzzes what kevo decodes from a run database's stored JSON columns (another process, an older
// or newer kevo, or a hand edit may have written them): a run's configuration, baseline and final
// records, and a candidate's features, compile and verdict records (bench, report).
// The decoders read fields through util/json_fields.h: a value of another type reads as absent
// (reports) or is an error naming the field (a run's options); nothing here may throw, so any
// exception is a finding like a crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "bench/metrics.h"
#include "evolve/features.h"


extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto j = nlohmann::json::parse(text, nullptr, false);
  (void)kevo::evolve::KernelFeatures::from_json(j).cell();

  kevo::store::RunRow run;
  run.id = 1;
  run.task = "fuzz";
  run.config_json = run.baseline_json = run.final_json = text;
  run.status = size % 2 ? kevo::store::RunStatus::kFinished : kevo::store::RunStatus::kRunning;
  run.best_candidate = 1;
  kevo::store::CandidateRow c;
  c.id = 1;
  c.run_id = 1;
  c.seq = 1;
  c.outcome = kevo::store::CandidateOutcome::kPass;
  c.speedup = 2;
  c.time_ms = 1;
  c.accepted = true;
  c.parents = {1};  // a cycle: lineage() must stop
  c.compile_json = c.verdict_json = c.features_json = text;
  auto r = kevo::bench::task_result(run, {c}, kevo::store::RunTotals{});
  (void)kevo::bench::aggregate({r});
  (void)kevo::bench::best_so_far({c});
  (void)kevo::bench::lineage({c}, 1);
  return 0;
}
