// CPU reference for maxpool2d_backward: per window, the first largest in-bounds input (row-major
// scan, strict >) gets the window's dy; parallel over (n, c) planes, which own their dx plane.
#include <kevo/reference.h>

#include <algorithm>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* x = a->inputs[0].data;
  const double* dy = a->inputs[1].data;
  double* dx = a->outputs[0].data;
  const int64_t* d = a->dims;
  const int64_t N = d[0], C = d[1], H = d[2], W = d[3], KS = d[4], T = d[5], P = d[6];
  const int64_t HO = (H + 2 * P - KS) / T + 1, WO = (W + 2 * P - KS) / T + 1;
  kevo_parallel(a, N * C, [&](int64_t nc) {
    const double* xc = x + nc * H * W;
    double* dxc = dx + nc * H * W;
    for (int64_t i = 0; i < H * W; ++i) dxc[i] = 0;
    for (int64_t oh = 0; oh < HO; ++oh)
      for (int64_t ow = 0; ow < WO; ++ow) {
        int64_t best = -1;
        for (int64_t ih = std::max<int64_t>(0, oh * T - P); ih < std::min(H, oh * T - P + KS); ++ih)
          for (int64_t iw = std::max<int64_t>(0, ow * T - P); iw < std::min(W, ow * T - P + KS);
               ++iw)
            if (best < 0 || xc[ih * W + iw] > xc[best]) best = ih * W + iw;
        dxc[best] += dy[(nc * HO + oh) * WO + ow];
      }
  });
}
