// CPU reference for max_dim0 (column maxima); parallel over blocks of columns.
#include <kevo/reference.h>

#include <algorithm>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* x = a->inputs[0].data;
  double* y = a->outputs[0].data;
  const int64_t R = a->dims[0], N = a->dims[1];
  const int64_t cols = 256;  // a block of columns per task keeps the row walk cache-friendly
  kevo_parallel(a, (N + cols - 1) / cols, [&](int64_t c) {
    const int64_t lo = c * cols, hi = std::min(N, lo + cols);
    for (int64_t n = lo; n < hi; ++n) y[n] = x[n];
    for (int64_t r = 1; r < R; ++r)
      for (int64_t n = lo; n < hi; ++n) y[n] = std::max(y[n], x[r * N + n]);
  });
}
