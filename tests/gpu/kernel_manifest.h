// The GPU suite's kernel manifest (tests/gpu/kernels/manifest.toml): each kernel, the task it is
// judged on and the verdict a correct checker gives it, as codes (check/verdict.h's Outcome,
// check/reason.h's Reason). Read once for the GPU test that runs the kernels and for the CPU test
// that checks the manifest itself, so a misspelt outcome or reason fails on any machine.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "check/reason.h"
#include "check/verdict.h"
#include "util/result.h"

namespace kevo::gpu_suite {

struct KernelCase {
  std::string file, task;  // file: relative to the manifest's folder; task: a bundled task's name
  Outcome expect = Outcome::Pass;
  std::optional<Reason> reason;  // the reason it is rejected for (nullopt only for a pass)
  std::string static_rule;       // with Reason::kStatic: the rule ("" any)
  // Other reasons that reject it rightly, for kernels two guards race to catch (`also = [...]` in
  // the manifest): forge_events' forged spans read as timing_forged or, first, below_sol.
  std::vector<Reason> also;
  bool no_static = false;        // evaluated with --no-static-gate
  double max_speedup = 0;        // > 0: a trick that no longer works must not show a speedup above it
  std::string reason_text() const;  // as the manifest writes it ("" for none)
  // Whether a verdict's reason, as the verdict writes it ("static:stream_create"), is one expected.
  bool accepts(std::string_view verdict_reason) const;
};

// Every [[kernel]] of the manifest's text; an error names each entry whose outcome or reason this
// build does not know, that lacks its file, task or expected outcome, or that expects a rejection
// without naming its reason.
Result<std::vector<KernelCase>> parse_kernel_manifest(std::string_view toml_text, std::string_view source);
Result<std::vector<KernelCase>> load_kernel_manifest(const std::filesystem::path& file);

}  // namespace kevo::gpu_suite
