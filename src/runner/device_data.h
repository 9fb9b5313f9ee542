// Trusted device-side data work for kevo-runner: filling input buffers from a DrawSpec and
// comparing an output with a reference where both already lie in GPU memory. This is what lets
// `kevo eval` check GB-sized configs without moving them through the checker's memory: the
// candidate's runner and the oracle's runner each draw the same inputs on the GPU, and the
// oracle's runner compares the candidate's outputs (opened through CUDA IPC, read-only use) with
// its own. The semantics are those of check/compare.cpp, element for element.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "task/draw.h"

namespace kevo::dev {

// Fills n elements of dtype (kevo_dtype numbering) with draw_value(d, i), converted as the host's
// store_from_double does (round to nearest even; integers rounded).
cudaError_t fill(void* dst, int dtype, int64_t n, const DrawSpec& d, cudaStream_t s);

struct CompareResult {
  int64_t count = 0, mismatches = 0, unwritten = 0, nonfinite = 0;
  int64_t first_bad = -1;
  double max_abs_err = 0, max_rel_err = 0, first_got = 0, first_want = 0;
};

// got vs want: |g - w| <= atol * max(1, rms(finite want)) + rtol * |w|; a non-finite reference
// must be matched in kind; with check_poison, failing elements whose bytes all equal 0xFF count
// as unwritten. Synchronizes the stream.
cudaError_t compare(const void* got, int got_dtype, const void* want, int want_dtype, int64_t n,
                    double atol, double rtol, bool check_poison, cudaStream_t s, CompareResult* out);

// Number of differing bytes between two device buffers of n bytes. Synchronizes the stream.
cudaError_t count_differing_bytes(const void* a, const void* b, size_t n, cudaStream_t s, uint64_t* out);

// A timed call's output, summarised where it lies (check/output_sums.h says why these): the count
// of non-finite elements, the sum of squares of the finite ones, and two sums of them signed by
// draw_sign(key, i, 0|1). Accumulated into *out (device memory, zeroed by the caller) without
// synchronizing, so a batch of calls runs back to back.
struct OutputSums {
  unsigned long long nonfinite;
  double sum_sq, signed0, signed1;
};
cudaError_t sums(const void* p, int dtype, int64_t n, uint64_t key, OutputSums* out, cudaStream_t s);

}  // namespace kevo::dev
