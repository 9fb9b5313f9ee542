// CPU reference for rms_norm_backward: r recomputed per (b, s), then dx and dw, in double
// precision; parallel over (b, blocks of s) for dx and over c for dw.
#include <kevo/reference.h>

#include <algorithm>
#include <cmath>
#include <vector>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* x = a->inputs[0].data;
  const double* w = a->inputs[1].data;
  const double* dy = a->inputs[2].data;
  double* dx = a->outputs[0].data;
  double* dw = a->outputs[1].data;
  const int64_t B = a->dims[0], C = a->dims[1], S = a->dims[2];
  const double eps = a->scalars[0];
  std::vector<double> r(static_cast<size_t>(B * S));
  kevo_parallel(a, B * S, [&](int64_t t) {
    const int64_t b = t / S, s = t % S;
    double ss = 0, dot = 0;
    for (int64_t c = 0; c < C; ++c) ss += x[(b * C + c) * S + s] * x[(b * C + c) * S + s];
    const double rs = 1.0 / std::sqrt(ss / static_cast<double>(C) + eps);
    r[static_cast<size_t>(t)] = rs;
    for (int64_t c = 0; c < C; ++c) {
      const int64_t i = (b * C + c) * S + s;
      dot += dy[i] * w[c] * x[i] * rs;
    }
    dot /= static_cast<double>(C);
    for (int64_t c = 0; c < C; ++c) {
      const int64_t i = (b * C + c) * S + s;
      dx[i] = rs * (dy[i] * w[c] - x[i] * rs * dot);
    }
  });
  kevo_parallel(a, C, [&](int64_t c) {
    for (int64_t b = 0; b < B; ++b)
      for (int64_t s = 0; s < S; ++s) {
        const int64_t i = (b * C + c) * S + s;
        dw[c] += dy[i] * x[i] * r[static_cast<size_t>(b * S + s)];
      }
  });
}
