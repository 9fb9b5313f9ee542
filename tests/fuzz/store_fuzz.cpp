// Fuzzes what kevo decodes from a run database's stored JSON columns (another process, an older
// or newer kevo, or a hand edit may have written them): a run's configuration, baseline and final
// records, a candidate's features, compile and verdict records, and a job's result (results/).
// The decoders read fields through results/stored_json.h and util/json_fields.h: a value of another
// type reads as absent; nothing here may throw, so any exception is a finding like a crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "evolve/features.h"
#include "results/job_result_view.h"
#include "results/metrics.h"
#include "results/run_baseline.h"
#include "results/verdict_view.h"


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
  auto r = kevo::results::task_result(run, {c}, kevo::store::RunTotals{});
  (void)kevo::results::aggregate({r});
  (void)kevo::results::best_so_far({c});
  (void)kevo::results::lineage({c}, 1);
  (void)kevo::results::baseline_from_text(text).to_json().dump();
  (void)kevo::results::verdict_view(j);
  (void)kevo::results::job_result_view(text);
  return 0;
}
