// CPU reference for layernorm (two-pass mean and biased variance), in double precision.
#include <kevo/reference.h>

#include <cmath>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* x = a->inputs[0].data;
  const double* w = a->inputs[1].data;
  const double* bias = a->inputs[2].data;
  double* y = a->outputs[0].data;
  const double eps = a->scalars[0];
  const int64_t B = a->dims[0], N = a->dims[1];
  kevo_parallel(a, B, [&](int64_t b) {
    const double* xr = x + b * N;
    double* yr = y + b * N;
    double mean = 0;
    for (int64_t i = 0; i < N; ++i) mean += xr[i];
    mean /= (double)N;
    double var = 0;
    for (int64_t i = 0; i < N; ++i) var += (xr[i] - mean) * (xr[i] - mean);
    var /= (double)N;
    const double rstd = 1.0 / std::sqrt(var + eps);
    for (int64_t i = 0; i < N; ++i) yr[i] = (xr[i] - mean) * rstd * w[i] + bias[i];
  });
}
