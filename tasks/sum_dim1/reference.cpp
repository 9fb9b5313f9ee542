// CPU reference for sum_dim1, in double precision; parallel over b.
#include <kevo/reference.h>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* x = a->inputs[0].data;
  double* y = a->outputs[0].data;
  const int64_t B = a->dims[0], R = a->dims[1], N = a->dims[2];
  kevo_parallel(a, B, [&](int64_t b) {
    double* yb = y + b * N;
    for (int64_t n = 0; n < N; ++n) yb[n] = 0;
    for (int64_t r = 0; r < R; ++r) {
      const double* xr = x + (b * R + r) * N;
      for (int64_t n = 0; n < N; ++n) yb[n] += xr[n];
    }
  });
}
