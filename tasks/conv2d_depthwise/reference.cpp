// CPU reference for conv2d_depthwise (stride 1, zero padding P), in double; parallel over (n, c).
#include <kevo/reference.h>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* x = a->inputs[0].data;
  const double* w = a->inputs[1].data;
  double* y = a->outputs[0].data;
  const int64_t* d = a->dims;
  const int64_t C = d[1], H = d[2], W = d[3], R = d[4], S = d[5], P = d[6];
  const int64_t N = d[0], HO = H + 2 * P - R + 1, WO = W + 2 * P - S + 1;
  kevo_parallel(a, N * C, [&](int64_t nc) {
    const int64_t c = nc % C;
    const double* xc = x + nc * H * W;
    double* yc = y + nc * HO * WO;
    for (int64_t oh = 0; oh < HO; ++oh)
      for (int64_t ow = 0; ow < WO; ++ow) {
        double acc = 0;
        for (int64_t r = 0; r < R; ++r) {
          const int64_t ih = oh + r - P;
          if (ih < 0 || ih >= H) continue;
          for (int64_t s = 0; s < S; ++s) {
            const int64_t iw = ow + s - P;
            if (iw >= 0 && iw < W) acc += xc[ih * W + iw] * w[(c * R + r) * S + s];
          }
        }
        yc[oh * WO + ow] = acc;
      }
  });
}
