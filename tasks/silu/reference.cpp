// CPU reference for silu, in double precision.
#include <kevo/reference.h>

#include <algorithm>
#include <cmath>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* x = a->inputs[0].data;
  double* y = a->outputs[0].data;
  const int64_t n = a->dims[0];
  const double* s = a->scalars;
  (void)s;
  const int64_t chunk = 1 << 16;
  kevo_parallel(a, (n + chunk - 1) / chunk, [&](int64_t c) {
    const int64_t end = std::min(n, (c + 1) * chunk);
    for (int64_t i = c * chunk; i < end; ++i) {
      const double v = x[i];
      y[i] = v / (1.0 + std::exp(-v));
    }
  });
}
