// Fuzzes what kevo decodes from a run database's stored JSON columns (another process, an older
// or newer kevo, or a hand edit may have written them): a run's configuration (--resume), its
// baseline and final records, and a candidate's features, compile and verdict records (bench,
// report).
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "bench/metrics.h"
#include "evolve/engine.h"
#include "evolve/features.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  kevo::store::RunRow run;
  run.id = 1;
  run.task = "fuzz";
  run.config_json = run.baseline_json = run.final_json = text;
  run.status = size % 2 ? kevo::store::RunStatus::kFinished : kevo::store::RunStatus::kRunning;
  run.best_candidate = 1;
  (void)kevo::evolve::options_of_run(run);

  kevo::store::CandidateRow c;
  c.id = 1;
  c.run_id = 1;
  c.seq = 1;
  c.outcome = "pass";
  c.speedup = 2;
  c.time_ms = 1;
  c.compile_json = c.verdict_json = c.features_json = text;
  (void)kevo::evolve::KernelFeatures::from_json(nlohmann::json::parse(text, nullptr, false));
  (void)kevo::bench::task_result(run, {c}, kevo::store::RunTotals{});
  return 0;
}
