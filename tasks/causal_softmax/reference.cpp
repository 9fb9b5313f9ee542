// CPU reference for causal_softmax, in double precision; parallel over rows (b, i).
#include <kevo/reference.h>

#include <algorithm>
#include <cmath>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* x = a->inputs[0].data;
  double* y = a->outputs[0].data;
  const int64_t B = a->dims[0], T = a->dims[1];
  const double scale = a->scalars[0];
  kevo_parallel(a, B * T, [&](int64_t row) {
    const int64_t i = row % T;
    const double* xr = x + row * T;
    double* yr = y + row * T;
    double m = scale * xr[0];
    for (int64_t j = 1; j <= i; ++j) m = std::max(m, scale * xr[j]);
    double s = 0;
    for (int64_t j = 0; j <= i; ++j) s += std::exp(scale * xr[j] - m);
    for (int64_t j = 0; j <= i; ++j) yr[j] = std::exp(scale * xr[j] - m) / s;
    for (int64_t j = i + 1; j < T; ++j) yr[j] = 0;
  });
}
