// CPU reference for frobenius_normalize, in double precision: chunked sum of squares, then scale.
#include <kevo/reference.h>

#include <algorithm>
#include <cmath>
#include <vector>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* x = a->inputs[0].data;
  double* y = a->outputs[0].data;
  const int64_t n = a->dims[0];
  const int64_t chunk = 1 << 16, chunks = (n + chunk - 1) / chunk;
  std::vector<double> part(static_cast<size_t>(chunks), 0.0);
  kevo_parallel(a, chunks, [&](int64_t c) {
    double s = 0;
    for (int64_t i = c * chunk; i < std::min(n, (c + 1) * chunk); ++i) s += x[i] * x[i];
    part[static_cast<size_t>(c)] = s;
  });
  double total = 0;
  for (double p : part) total += p;
  const double norm = std::sqrt(total);
  kevo_parallel(a, chunks, [&](int64_t c) {
    for (int64_t i = c * chunk; i < std::min(n, (c + 1) * chunk); ++i) y[i] = x[i] / norm;
  });
}
