// CPU reference for group_norm (two-pass statistics per (n, g)), in double precision.
#include <kevo/reference.h>

#include <cmath>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* x = a->inputs[0].data;
  const double* w = a->inputs[1].data;
  const double* bias = a->inputs[2].data;
  double* y = a->outputs[0].data;
  const int64_t N = a->dims[0], C = a->dims[1], HW = a->dims[2] * a->dims[3], G = a->dims[4];
  const int64_t cpg = C / G;
  const double eps = a->scalars[0];
  kevo_parallel(a, N * G, [&](int64_t ng) {
    const int64_t n = ng / G, g = ng % G;
    double mean = 0, var = 0;
    for (int64_t c = g * cpg; c < (g + 1) * cpg; ++c)
      for (int64_t i = 0; i < HW; ++i) mean += x[(n * C + c) * HW + i];
    mean /= static_cast<double>(cpg * HW);
    for (int64_t c = g * cpg; c < (g + 1) * cpg; ++c)
      for (int64_t i = 0; i < HW; ++i) {
        const double d = x[(n * C + c) * HW + i] - mean;
        var += d * d;
      }
    var /= static_cast<double>(cpg * HW);
    const double rstd = 1.0 / std::sqrt(var + eps);
    for (int64_t c = g * cpg; c < (g + 1) * cpg; ++c)
      for (int64_t i = 0; i < HW; ++i) {
        const int64_t k = (n * C + c) * HW + i;
        y[k] = (x[k] - mean) * rstd * w[c] + bias[c];
      }
  });
}
