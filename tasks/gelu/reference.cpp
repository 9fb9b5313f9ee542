// CPU reference for gelu (exact erf form), in double precision.
#include <kevo/reference.h>

#include <algorithm>
#include <cmath>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* x = a->inputs[0].data;
  double* y = a->outputs[0].data;
  const int64_t n = a->dims[0];
  const int64_t chunk = 1 << 16;
  kevo_parallel(a, (n + chunk - 1) / chunk, [&](int64_t c) {
    int64_t end = std::min(n, (c + 1) * chunk);
    for (int64_t i = c * chunk; i < end; ++i)
      y[i] = 0.5 * x[i] * (1.0 + std::erf(x[i] / std::sqrt(2.0)));
  });
}
