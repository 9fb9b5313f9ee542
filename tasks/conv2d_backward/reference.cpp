// CPU reference for conv2d_backward, in double precision: dx by scattering each dy through the
// window (parallel over (n, c) planes, which own their dx plane), dw by correlating x with dy over
// the batch (parallel over (k, c), which own their R x S weights).
#include <kevo/reference.h>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* x = a->inputs[0].data;
  const double* w = a->inputs[1].data;
  const double* dy = a->inputs[2].data;
  double* dx = a->outputs[0].data;
  double* dw = a->outputs[1].data;
  const int64_t* d = a->dims;
  const int64_t N = d[0], C = d[1], H = d[2], W = d[3], K = d[4], R = d[5], S = d[6], P = d[7];
  const int64_t HO = H + 2 * P - R + 1, WO = W + 2 * P - S + 1;
  // Calls fn(dy[n, k, oh, ow], x index, w index) once for every term
  // x[n, c, oh + r - P, ow + s - P] * w[k, c, r, s] of the forward's y[n, k, :, :] (in-bounds x
  // only); the x index is within x's (n, c) plane, the w index within w's (k, c) filter.
  auto for_terms = [&](int64_t n, int64_t k, auto&& fn) {
    const double* g = dy + (n * K + k) * HO * WO;
    for (int64_t oh = 0; oh < HO; ++oh)
      for (int64_t ow = 0; ow < WO; ++ow)
        for (int64_t r = 0; r < R; ++r) {
          const int64_t ih = oh + r - P;
          if (ih < 0 || ih >= H) continue;
          for (int64_t s = 0; s < S; ++s) {
            const int64_t iw = ow + s - P;
            if (iw >= 0 && iw < W) fn(g[oh * WO + ow], ih * W + iw, r * S + s);
          }
        }
  };
  kevo_parallel(a, N * C, [&](int64_t nc) {
    const int64_t n = nc / C, c = nc % C;
    double* dxp = dx + nc * H * W;
    for (int64_t i = 0; i < H * W; ++i) dxp[i] = 0;
    for (int64_t k = 0; k < K; ++k) {
      const double* wk = w + (k * C + c) * R * S;
      for_terms(n, k, [&](double g, int64_t xi, int64_t wi) { dxp[xi] += g * wk[wi]; });
    }
  });
  kevo_parallel(a, K * C, [&](int64_t kc) {
    const int64_t k = kc / C, c = kc % C;
    double* dwp = dw + kc * R * S;
    for (int64_t i = 0; i < R * S; ++i) dwp[i] = 0;
    for (int64_t n = 0; n < N; ++n) {
      const double* xp = x + (n * C + c) * H * W;
      for_terms(n, k, [&](double g, int64_t xi, int64_t wi) { dwp[wi] += g * xp[xi]; });
    }
  });
}
