// CPU reference for argmax_dim1 (first index of the maximum along dim 1); parallel over b.
#include <kevo/reference.h>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* x = a->inputs[0].data;
  double* y = a->outputs[0].data;
  const int64_t B = a->dims[0], R = a->dims[1], N = a->dims[2];
  kevo_parallel(a, B, [&](int64_t b) {
    double* yb = y + b * N;
    const double* xb = x + b * R * N;
    for (int64_t n = 0; n < N; ++n) yb[n] = 0;
    for (int64_t r = 1; r < R; ++r)
      for (int64_t n = 0; n < N; ++n)
        if (xb[r * N + n] > xb[static_cast<int64_t>(yb[n]) * N + n]) yb[n] = static_cast<double>(r);
  });
}
