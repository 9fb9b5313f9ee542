// CPU reference for cumsum_cols (inclusive, along dim 0), in double; parallel over column blocks.
#include <kevo/reference.h>

#include <algorithm>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* x = a->inputs[0].data;
  double* y = a->outputs[0].data;
  const int64_t M = a->dims[0], N = a->dims[1];
  const int64_t cols = 256;
  kevo_parallel(a, (N + cols - 1) / cols, [&](int64_t c) {
    const int64_t lo = c * cols, hi = std::min(N, lo + cols);
    for (int64_t n = lo; n < hi; ++n) y[n] = x[n];
    for (int64_t i = 1; i < M; ++i)
      for (int64_t n = lo; n < hi; ++n) y[i * N + n] = y[(i - 1) * N + n] + x[i * N + n];
  });
}
