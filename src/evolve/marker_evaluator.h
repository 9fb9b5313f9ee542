// A stand-in for the GPU checker that reads the verdict from marker comments in the candidate,
// so the whole evolution loop (prompts, parsing, selection, storage) runs on a CPU in tests and
// in `kevo evolve --fake-gpu` dry runs. Runs made with it are marked fake in the database.
//
//   // fake: pass time_ms=1.25 [noise=0.02] [regs=64] [smem=4096] [wall_s=0.2 | sleep_ms=20]
//                [dram=82] [sm=20]   (asked for a profile: one kernel at these % of peak; none: "no ncu")
//   // fake: compile_error <diagnostic text>
//   // fake: incorrect <first mismatch text>
//   // fake: unsafe <reason>        // fake: crash        // fake: timeout
//   // fake: held_out_fail           (passes visible configs, fails the held-out ones)
//
// wall_s (or sleep_ms) makes the evaluation take that long, so scaling and fault tests of the
// evaluation pool and the workers mean something without a GPU.
// A source with no marker is incorrect ("no fake marker"). Speedup = baseline_ms / time_ms with a
// CI of +-noise (relative); asked for PyTorch times (EvalOptions::torch_time), it reports eager at
// the baseline's time and torch.compile 20% faster; asked for a profile, the baseline's is DRAM 45%,
// SM 10% of peak. Every call is recorded for tests.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "evolve/candidate_evaluator.h"

namespace kevo::evolve {

struct MarkerCall {
  std::string source;
  bool held_out_only = false, visible_only = false, baseline = false;
  std::optional<uint64_t> seed;
  double timing_stop_below = 0;  // the line the engine raced this evaluation against (0: none)
  double baseline_ms = 0;        // the run's baseline figure it was handed (0: none)
  std::string baseline_gpu;
};

class MarkerEvaluator final : public CandidateEvaluator {
 public:
  explicit MarkerEvaluator(double baseline_ms = 2.0) : baseline_ms_(baseline_ms) {}
  Verdict evaluate(const Task& task, const std::filesystem::path& source_file,
                   const EvalOptions& opts) override;
  Verdict evaluate_baseline(const Task& task, const EvalOptions& opts) override;
  std::string cuda_version() override { return "CUDA 12.4 (fake)"; }
  // The markers are the program here: comments count.
  std::string fingerprint(const std::string& source) const override;
  bool is_fake() const override { return true; }

  // Judges source text directly (what evaluate() does after reading the file).
  Verdict judge(const Task& task, const std::string& source, const EvalOptions& opts) const;
  std::vector<MarkerCall> calls() const;

 private:
  double baseline_ms_;
  mutable std::mutex mu_;
  std::vector<MarkerCall> calls_;
};

}  // namespace kevo::evolve
