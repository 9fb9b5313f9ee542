// A runner's fatal CUDA error is classified by its cudaError_t number, never by the words of its
// message; a reply without the number is a plain CUDA error.
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

}  // namespace
}  // namespace kevo
