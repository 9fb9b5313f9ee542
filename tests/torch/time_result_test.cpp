// How PyTorch times read: the "vs PyTorch" line, the JSON block, and the eval verdict's text and
// JSON around them, on fabricated TimeResults (no torch needed).
#include <gtest/gtest.h>

#include "check/verdict.h"
#include "torch/time_result.h"
#include "torch/torch_timing.h"

namespace kevo::torch {
namespace {

TimedMode measured(double ms) {
  TimedMode m;
  m.ok = true;
  m.median_ms = ms;
  m.ci_low_ms = ms * 0.99;
  m.ci_high_ms = ms * 1.01;
  m.min_ms = ms * 0.95;
  m.n = 40;
  return m;
}

TimedMode failed(const std::string& why) {
  TimedMode m;
  m.error = why;
  return m;
}

TimeResult fabricated() {
  TimeResult r;
  r.device = "cuda";
  r.device_name = "NVIDIA H100 80GB HBM3";
  r.modes["eager"] = measured(1.234);
  r.modes["compile"] = measured(0.987);
  r.modes["extension"] = measured(1.1);
  return r;
}

TEST(TimeResult, LineShowsEveryModeWithSpeedups) {
  TimeResult r = fabricated();
  double cand = 1.234 / 2.1;  // 2.10x faster than eager
  EXPECT_EQ(pytorch_line(r, cand),
            "vs PyTorch: eager 1.234 ms (2.10x), torch.compile 0.987 ms (1.68x), extension 1.1 ms (1.87x)");
  EXPECT_EQ(pytorch_line(r, 0), "vs PyTorch: eager 1.234 ms, torch.compile 0.987 ms, extension 1.1 ms");
  EXPECT_EQ(pytorch_times(r, 0), "eager 1.234 ms, torch.compile 0.987 ms, extension 1.1 ms");
  ASSERT_TRUE(speedup_over(r, "compile", 0.5));
  EXPECT_DOUBLE_EQ(*speedup_over(r, "compile", 0.5), 0.987 / 0.5);
  EXPECT_FALSE(speedup_over(r, "compile", 0));
  EXPECT_FALSE(speedup_over(r, "nope", 0.5));
}

TEST(TimeResult, FailedModesSayWhyOnOneLine) {
  TimeResult r = fabricated();
  r.modes["compile"] = failed("torch.compile needs torch >= 2.0 (this is 1.13.1)");
  r.modes["extension"] = failed("the extension torch_baseline.cu does not build: RuntimeError: Error building\n"
                                "a long compiler log\nmore lines");
  std::string line = pytorch_line(r, 0.617);
  EXPECT_EQ(line,
            "vs PyTorch: eager 1.234 ms (2.00x), torch.compile failed (torch.compile needs torch >= 2.0 (this is "
            "1.13.1)), extension failed (the extension torch_baseline.cu does not build: RuntimeError: Error building)");
  EXPECT_EQ(line.find('\n'), std::string::npos);
  // Modes not asked for are not mentioned.
  TimeResult eager_only;
  eager_only.modes["eager"] = measured(2.0);
  EXPECT_EQ(pytorch_line(eager_only, 1.0), "vs PyTorch: eager 2 ms (2.00x)");
  EXPECT_EQ(pytorch_line(TimeResult{}, 1.0), "vs PyTorch: nothing measured");
}

TEST(TimeResult, JsonBlock) {
  TimeResult r = fabricated();
  r.modes["compile"] = failed("torch.compile failed: BackendCompilerFailed: ...");
  r.modes.erase("extension");
  auto j = pytorch_json(r);
  EXPECT_EQ(j["device"], "cuda");
  EXPECT_EQ(j["device_name"], "NVIDIA H100 80GB HBM3");
  EXPECT_DOUBLE_EQ(j["eager_ms"].get<double>(), 1.234);
  EXPECT_TRUE(j["compile_ms"].is_null());
  EXPECT_TRUE(j["extension_ms"].is_null());
  EXPECT_EQ(j["errors"]["compile"], "torch.compile failed: BackendCompilerFailed: ...");
  EXPECT_FALSE(j["errors"].contains("extension"));  // not asked for: no error either
  EXPECT_EQ(j["modes"]["eager"]["n"], 40);
  EXPECT_FALSE(j["modes"].contains("compile"));
}

TEST(TimeResult, UnavailableErrorsAreRecognizedByTheirCode) {
  EXPECT_TRUE(torch_unavailable(Error{"no CUDA: torch 2.4.0 sees no CUDA device", ErrorCode::kNoCuda}));
  EXPECT_TRUE(torch_unavailable(Error{"no Python with torch and numpy (set KEVO_PYTHON...):\n  python3: ...",
                                      ErrorCode::kNoTorch}));
  EXPECT_FALSE(torch_unavailable(Error{"/t/reference.py: SyntaxError: invalid syntax"}));
  EXPECT_FALSE(torch_unavailable(Error{"timeout: the PyTorch bridge did not answer 'time' in time", ErrorCode::kTimeout}));
  // The text decides nothing: a message that reads like one without its code is another failure.
  EXPECT_FALSE(torch_unavailable(Error{"no CUDA: torch 2.4.0 sees no CUDA device"}));
}

Timing timing_with_candidate(double ms) {
  Timing t;
  t.config = "main";
  t.candidate.median = ms;
  t.candidate.n = 100;
  return t;
}

TEST(EvalVerdict, PyTorchBlockInJsonAndText) {
  Verdict v;
  v.task = "relu";
  v.candidate = "k.cu";
  v.timing = timing_with_candidate(1.234 / 2.1);
  v.timing->pytorch = fabricated();
  auto j = v.to_json();
  const auto& t = j["timing"];
  EXPECT_DOUBLE_EQ(t["pytorch"]["eager_ms"].get<double>(), 1.234);
  EXPECT_DOUBLE_EQ(t["pytorch"]["compile_ms"].get<double>(), 0.987);
  EXPECT_DOUBLE_EQ(t["pytorch"]["extension_ms"].get<double>(), 1.1);
  EXPECT_EQ(t["pytorch"]["device"], "cuda");
  EXPECT_NEAR(t["speedup_vs_eager"].get<double>(), 2.1, 1e-12);
  EXPECT_NEAR(t["speedup_vs_compile"].get<double>(), 0.987 / (1.234 / 2.1), 1e-12);
  EXPECT_NEAR(t["speedup_vs_extension"].get<double>(), 1.1 / (1.234 / 2.1), 1e-12);
  std::string text = v.to_text();
  EXPECT_NE(text.find("            vs PyTorch: eager 1.234 ms (2.10x), torch.compile 0.987 ms (1.68x), "
                      "extension 1.1 ms (1.87x)\n"),
            std::string::npos)
      << text;
  // A failed mode: null time and speedup, the error in errors.
  v.timing->pytorch->modes["compile"] = failed("torch.compile needs torch >= 2.0 (this is 1.13.1)");
  j = v.to_json();
  EXPECT_TRUE(j["timing"]["pytorch"]["compile_ms"].is_null());
  EXPECT_TRUE(j["timing"]["speedup_vs_compile"].is_null());
  EXPECT_EQ(j["timing"]["pytorch"]["errors"]["compile"], "torch.compile needs torch >= 2.0 (this is 1.13.1)");
  // Timed on the CPU (tests): said so.
  v.timing->pytorch->device = "cpu";
  v.timing->pytorch->device_name = "CPU: Some Processor";
  EXPECT_NE(v.to_text().find("[on CPU: Some Processor]"), std::string::npos);
}

TEST(EvalVerdict, SkippedPyTorchTimingIsOneNote) {
  Verdict v;
  v.timing = timing_with_candidate(1.0);
  v.timing->pytorch_note = "no CUDA: torch 1.13.1 sees no CUDA device (torch.cuda.is_available() is False)";
  auto j = v.to_json();
  EXPECT_EQ(j["timing"]["pytorch"]["skipped"], v.timing->pytorch_note);
  EXPECT_FALSE(j["timing"].contains("speedup_vs_eager"));
  EXPECT_NE(v.to_text().find("            vs PyTorch: skipped (no CUDA: torch 1.13.1 sees no CUDA device "
                             "(torch.cuda.is_available() is False))\n"),
            std::string::npos)
      << v.to_text();
  // Not asked for (or no torch_reference): nothing at all.
  v.timing->pytorch_note.clear();
  EXPECT_FALSE(v.to_json()["timing"].contains("pytorch"));
  EXPECT_EQ(v.to_text().find("PyTorch"), std::string::npos);
}

}  // namespace
}  // namespace kevo::torch
