// CPU reference for layernorm_backward: row statistics recomputed (two-pass mean and biased
// variance), then dx per row and dweight, dbias per column, in double precision.
#include <kevo/reference.h>

#include <cmath>
#include <vector>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* x = a->inputs[0].data;
  const double* w = a->inputs[1].data;
  const double* dy = a->inputs[2].data;
  double* dx = a->outputs[0].data;
  double* dw = a->outputs[1].data;
  double* db = a->outputs[2].data;
  const double eps = a->scalars[0];
  const int64_t B = a->dims[0], N = a->dims[1];
  std::vector<double> mean(static_cast<size_t>(B)), rstd(static_cast<size_t>(B));
  kevo_parallel(a, B, [&](int64_t b) {
    const double* xr = x + b * N;
    const double* gr = dy + b * N;
    double m = 0, v = 0;
    for (int64_t i = 0; i < N; ++i) m += xr[i];
    m /= static_cast<double>(N);
    for (int64_t i = 0; i < N; ++i) v += (xr[i] - m) * (xr[i] - m);
    const double r = 1.0 / std::sqrt(v / static_cast<double>(N) + eps);
    mean[static_cast<size_t>(b)] = m, rstd[static_cast<size_t>(b)] = r;
    double sg = 0, sgx = 0;
    for (int64_t i = 0; i < N; ++i) {
      sg += gr[i] * w[i];
      sgx += gr[i] * w[i] * (xr[i] - m) * r;
    }
    sg /= static_cast<double>(N), sgx /= static_cast<double>(N);
    for (int64_t i = 0; i < N; ++i) dx[b * N + i] = r * (gr[i] * w[i] - sg - (xr[i] - m) * r * sgx);
  });
  kevo_parallel(a, N, [&](int64_t i) {
    for (int64_t b = 0; b < B; ++b) {
      dw[i] += dy[b * N + i] * (x[b * N + i] - mean[static_cast<size_t>(b)]) * rstd[static_cast<size_t>(b)];
      db[i] += dy[b * N + i];
    }
  });
}
