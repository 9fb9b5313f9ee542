// CPU reference for l2_normalize, in double precision; parallel over rows.
#include <kevo/reference.h>

#include <algorithm>
#include <cmath>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* x = a->inputs[0].data;
  double* y = a->outputs[0].data;
  const int64_t B = a->dims[0], N = a->dims[1];
  const double eps = a->scalars[0];
  kevo_parallel(a, B, [&](int64_t b) {
    const double* xr = x + b * N;
    double s = 0;
    for (int64_t i = 0; i < N; ++i) s += xr[i] * xr[i];
    const double d = std::max(std::sqrt(s), eps);
    for (int64_t i = 0; i < N; ++i) y[b * N + i] = xr[i] / d;
  });
}
