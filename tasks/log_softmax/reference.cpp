// CPU reference for log_softmax (max-subtracted), in double precision; parallel over rows.
#include <kevo/reference.h>

#include <algorithm>
#include <cmath>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* x = a->inputs[0].data;
  double* y = a->outputs[0].data;
  const int64_t B = a->dims[0], N = a->dims[1];
  kevo_parallel(a, B, [&](int64_t b) {
    const double* xr = x + b * N;
    double m = xr[0];
    for (int64_t i = 1; i < N; ++i) m = std::max(m, xr[i]);
    double s = 0;
    for (int64_t i = 0; i < N; ++i) s += std::exp(xr[i] - m);
    const double ls = std::log(s);
    for (int64_t i = 0; i < N; ++i) y[b * N + i] = (xr[i] - m) - ls;  // no cancellation near m
  });
}
