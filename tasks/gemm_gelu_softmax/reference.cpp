// CPU reference for gemm_gelu_softmax, in double precision; parallel over rows.
#include <kevo/reference.h>

#include <algorithm>
#include <cmath>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* x = a->inputs[0].data;
  const double* W = a->inputs[1].data;
  const double* b = a->inputs[2].data;
  double* y = a->outputs[0].data;
  const int64_t M = a->dims[0], N = a->dims[1], K = a->dims[2];
  kevo_parallel(a, M, [&](int64_t i) {
    const double* xr = x + i * K;
    double* yr = y + i * N;
    double m = -INFINITY;
    for (int64_t j = 0; j < N; ++j) {
      double z = b[j];
      for (int64_t k = 0; k < K; ++k) z += xr[k] * W[j * K + k];
      yr[j] = 0.5 * z * (1.0 + std::erf(z / std::sqrt(2.0)));
      m = std::max(m, yr[j]);
    }
    double s = 0;
    for (int64_t j = 0; j < N; ++j) s += (yr[j] = std::exp(yr[j] - m));
    for (int64_t j = 0; j < N; ++j) yr[j] /= s;
  });
}
