// A runner's fatal CUDA error is classified by its cudaError_t number, never by the words of its
// message; a reply without the number is a plain CUDA error. The guards' reports of a call and of a
// timed batch are judged by the same checks.
#include "check/runner_replies.h"

#include <gtest/gtest.h>

namespace kevo {
namespace {

TEST(FatalCudaReason, BadAccessesAndInstructionsAreIllegalAddress) {
  EXPECT_EQ(fatal_cuda_reason(kCudaErrorIllegalAddress), Reason::kIllegalAddress);
  EXPECT_EQ(fatal_cuda_reason(kCudaErrorIllegalInstruction), Reason::kIllegalAddress);
  EXPECT_EQ(fatal_cuda_reason(kCudaErrorMisalignedAddress), Reason::kIllegalAddress);
  // The numbers are CUDA's (driver_types.h): a changed constant would misclassify real runners.
  EXPECT_EQ(kCudaErrorIllegalAddress, 700);
  EXPECT_EQ(kCudaErrorIllegalInstruction, 715);
  EXPECT_EQ(kCudaErrorMisalignedAddress, 716);
}

TEST(FatalCudaReason, AnyOtherNumberOrNoneIsACudaError) {
  EXPECT_EQ(fatal_cuda_reason(0), Reason::kCudaError);    // no number: an older runner, or not CUDA's
  EXPECT_EQ(fatal_cuda_reason(719), Reason::kCudaError);  // cudaErrorLaunchFailure
  EXPECT_EQ(fatal_cuda_reason(2), Reason::kCudaError);    // cudaErrorMemoryAllocation
  EXPECT_EQ(fatal_cuda_reason(401), Reason::kCudaError);  // cudaErrorIllegalState: not an access
  EXPECT_EQ(fatal_cuda_reason(-1), Reason::kCudaError);
}

TEST(CheckGuards, ACleanReportPassesAndEachGuardDecidesItsReason) {
  proto::RunReply clean;
  clean.threads_before = clean.threads_after = 3;
  clean.span_ms = 2, clean.after_stream_ms = 0.01, clean.after_stream_cpu_ms = 0.01;
  Verdict ok;
  EXPECT_TRUE(check_guards(ok, GuardReport::of(clean), "call"));

  proto::RunReply thread = clean;
  thread.threads_after = 4;
  Verdict t;
  EXPECT_FALSE(check_guards(t, GuardReport::of(thread), "config 'main'"));
  EXPECT_EQ(t.reason, Reason::kHostThread);
  EXPECT_NE(t.message.find("3 threads before the call and 4 after"), std::string::npos) << t.message;

  // A timed batch: one call of several returned an error.
  proto::TimeBatchReply batch;
  batch.threads_before = batch.threads_after = 3;
  batch.rc = {0, 0, 5};
  Verdict rc;
  EXPECT_FALSE(check_guards(rc, GuardReport::of(batch), "timing"));
  EXPECT_EQ(rc.outcome, Outcome::Crash);
  EXPECT_EQ(rc.reason, Reason::kReturnedError);

  // Device time after the stream, spun on the CPU too: work left elsewhere. Waited for without the
  // CPU spinning (a descheduled host), it is not.
  batch.rc = {0};
  batch.after_stream_ms = 3, batch.after_stream_cpu_ms = 2.9;
  Verdict hidden;
  EXPECT_FALSE(check_guards(hidden, GuardReport::of(batch), "timing"));
  EXPECT_EQ(hidden.reason, Reason::kHiddenWork);
  EXPECT_NE(hidden.message.find("after the timed batch"), std::string::npos) << hidden.message;
  batch.after_stream_cpu_ms = 0.05;
  Verdict descheduled;
  EXPECT_TRUE(check_guards(descheduled, GuardReport::of(batch), "timing"));

  proto::RunReply foreign = clean;
  foreign.violations = {{"foreign_stream", "kernel launched on stream (nil)"}};
  Verdict f;
  EXPECT_FALSE(check_guards(f, GuardReport::of(foreign), "call"));
  EXPECT_EQ(f.reason, Reason::kForeignStream);
}

}  // namespace
}  // namespace kevo
