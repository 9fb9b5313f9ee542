// CPU reference for conv_transpose2d, in double precision: the scatter form (every input pixel adds
// its weighted patch), parallel over (n, k) so that each task owns one output plane.
#include <kevo/reference.h>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* x = a->inputs[0].data;
  const double* w = a->inputs[1].data;
  double* y = a->outputs[0].data;
  const int64_t* d = a->dims;
  const int64_t N = d[0], C = d[1], H = d[2], W = d[3], K = d[4], R = d[5], S = d[6], T = d[7],
                P = d[8];
  const int64_t HO = (H - 1) * T - 2 * P + R, WO = (W - 1) * T - 2 * P + S;
  kevo_parallel(a, N * K, [&](int64_t nk) {
    const int64_t n = nk / K, k = nk % K;
    double* yo = y + nk * HO * WO;
    for (int64_t i = 0; i < HO * WO; ++i) yo[i] = 0;
    for (int64_t c = 0; c < C; ++c)
      for (int64_t ih = 0; ih < H; ++ih)
        for (int64_t iw = 0; iw < W; ++iw) {
          const double xv = x[((n * C + c) * H + ih) * W + iw];
          for (int64_t r = 0; r < R; ++r) {
            const int64_t oh = ih * T - P + r;
            if (oh < 0 || oh >= HO) continue;
            for (int64_t s = 0; s < S; ++s) {
              const int64_t ow = iw * T - P + s;
              if (ow >= 0 && ow < WO) yo[oh * WO + ow] += xv * w[((c * K + k) * R + r) * S + s];
            }
          }
        }
  });
}
