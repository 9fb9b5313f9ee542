// CPU reference for conv2d (NCHW, stride 1, zero padding P), in double precision; parallel over (n,
// k).
#include <kevo/reference.h>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* x = a->inputs[0].data;
  const double* w = a->inputs[1].data;
  double* y = a->outputs[0].data;
  const int64_t* d = a->dims;
  const int64_t N = d[0], C = d[1], H = d[2], W = d[3], K = d[4], R = d[5], S = d[6], P = d[7];
  const int64_t HO = H + 2 * P - R + 1, WO = W + 2 * P - S + 1;
  kevo_parallel(a, N * K, [&](int64_t nk) {
    const int64_t n = nk / K, k = nk % K;
    double* yo = y + nk * HO * WO;
    for (int64_t oh = 0; oh < HO; ++oh)
      for (int64_t ow = 0; ow < WO; ++ow) {
        double acc = 0;
        for (int64_t c = 0; c < C; ++c)
          for (int64_t r = 0; r < R; ++r) {
            const int64_t ih = oh + r - P;
            if (ih < 0 || ih >= H) continue;
            for (int64_t s = 0; s < S; ++s) {
              const int64_t iw = ow + s - P;
              if (iw < 0 || iw >= W) continue;
              acc += x[((n * C + c) * H + ih) * W + iw] * w[((k * C + c) * R + r) * S + s];
            }
          }
        yo[oh * WO + ow] = acc;
      }
  });
}
