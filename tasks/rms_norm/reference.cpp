// CPU reference for rms_norm (over dim 1 of [B, C, S]), in double precision; parallel over (b,
// blocks of s).
#include <kevo/reference.h>

#include <algorithm>
#include <cmath>
#include <vector>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* x = a->inputs[0].data;
  const double* w = a->inputs[1].data;
  double* y = a->outputs[0].data;
  const int64_t B = a->dims[0], C = a->dims[1], S = a->dims[2];
  const double eps = a->scalars[0];
  const int64_t blk = 1024, nblk = (S + blk - 1) / blk;
  kevo_parallel(a, B * nblk, [&](int64_t t) {
    const int64_t b = t / nblk, s0 = (t % nblk) * blk, s1 = std::min(S, s0 + blk);
    std::vector<double> ss(static_cast<size_t>(s1 - s0), 0.0);
    for (int64_t c = 0; c < C; ++c) {
      const double* xr = x + (b * C + c) * S;
      for (int64_t s = s0; s < s1; ++s) ss[s - s0] += xr[s] * xr[s];
    }
    for (auto& v : ss) v = 1.0 / std::sqrt(v / static_cast<double>(C) + eps);
    for (int64_t c = 0; c < C; ++c) {
      const double* xr = x + (b * C + c) * S;
      double* yr = y + (b * C + c) * S;
      for (int64_t s = s0; s < s1; ++s) yr[s] = xr[s] * ss[s - s0] * w[c];
    }
  });
}
