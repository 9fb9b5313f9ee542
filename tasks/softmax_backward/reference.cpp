// CPU reference for softmax_backward: y = softmax(x) recomputed per row, then
// dx = y * (dy - sum(dy * y)), in double precision.
#include <kevo/reference.h>

#include <algorithm>
#include <cmath>
#include <vector>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* x = a->inputs[0].data;
  const double* dy = a->inputs[1].data;
  double* dx = a->outputs[0].data;
  const int64_t B = a->dims[0], N = a->dims[1];
  kevo_parallel(a, B, [&](int64_t b) {
    const double* xr = x + b * N;
    const double* gr = dy + b * N;
    double m = xr[0];
    for (int64_t i = 1; i < N; ++i) m = std::max(m, xr[i]);
    std::vector<double> y(static_cast<size_t>(N));
    double s = 0;
    for (int64_t i = 0; i < N; ++i) s += y[static_cast<size_t>(i)] = std::exp(xr[i] - m);
    double dot = 0;
    for (int64_t i = 0; i < N; ++i) dot += gr[i] * (y[static_cast<size_t>(i)] /= s);
    for (int64_t i = 0; i < N; ++i) dx[b * N + i] = y[static_cast<size_t>(i)] * (gr[i] - dot);
  });
}
