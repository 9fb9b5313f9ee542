// CPU reference for conv_bn_relu, in double precision; parallel over (n, k) output planes.
#include <kevo/reference.h>

#include <cmath>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* x = a->inputs[0].data;
  const double* w = a->inputs[1].data;
  const double* cbias = a->inputs[2].data;
  const double* mean = a->inputs[3].data;
  const double* var = a->inputs[4].data;
  const double* gamma = a->inputs[5].data;
  const double* beta = a->inputs[6].data;
  double* y = a->outputs[0].data;
  const int64_t* d = a->dims;
  const int64_t N = d[0], C = d[1], H = d[2], W = d[3], K = d[4], R = d[5], S = d[6], P = d[7];
  const int64_t HO = H + 2 * P - R + 1, WO = W + 2 * P - S + 1;
  const double eps = a->scalars[0];
  kevo_parallel(a, N * K, [&](int64_t nk) {
    const int64_t n = nk / K, k = nk % K;
    const double scale = gamma[k] / std::sqrt(var[k] + eps);
    for (int64_t oh = 0; oh < HO; ++oh)
      for (int64_t ow = 0; ow < WO; ++ow) {
        double z = cbias[k];
        for (int64_t c = 0; c < C; ++c)
          for (int64_t r = 0; r < R; ++r) {
            const int64_t ih = oh + r - P;
            if (ih < 0 || ih >= H) continue;
            for (int64_t s = 0; s < S; ++s) {
              const int64_t iw = ow + s - P;
              if (iw >= 0 && iw < W)
                z += x[((n * C + c) * H + ih) * W + iw] * w[((k * C + c) * R + r) * S + s];
            }
          }
        const double v = (z - mean[k]) * scale + beta[k];
        y[(nk * HO + oh) * WO + ow] = v > 0 ? v : 0.0;
      }
  });
}
