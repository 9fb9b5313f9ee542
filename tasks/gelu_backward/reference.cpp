// CPU reference for gelu_backward: dx = dy * (Phi(x) + x phi(x)), in double precision.
#include <kevo/reference.h>

#include <algorithm>
#include <cmath>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* x = a->inputs[0].data;
  const double* dy = a->inputs[1].data;
  double* dx = a->outputs[0].data;
  const int64_t n = a->dims[0];
  const int64_t chunk = 1 << 16;
  const double inv_sqrt2 = 1.0 / std::sqrt(2.0), inv_sqrt2pi = 1.0 / std::sqrt(2.0 * M_PI);
  kevo_parallel(a, (n + chunk - 1) / chunk, [&](int64_t c) {
    const int64_t end = std::min(n, (c + 1) * chunk);
    for (int64_t i = c * chunk; i < end; ++i) {
      const double cdf = 0.5 * (1.0 + std::erf(x[i] * inv_sqrt2));
      const double pdf = std::exp(-0.5 * x[i] * x[i]) * inv_sqrt2pi;
      dx[i] = dy[i] * (cdf + x[i] * pdf);
    }
  });
}
