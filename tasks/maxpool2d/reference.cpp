// CPU reference for maxpool2d (padding never wins); parallel over (n, c) planes.
#include <kevo/reference.h>

#include <algorithm>
#include <limits>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* x = a->inputs[0].data;
  double* y = a->outputs[0].data;
  const int64_t* d = a->dims;
  const int64_t N = d[0], C = d[1], H = d[2], W = d[3], KS = d[4], T = d[5], P = d[6];
  const int64_t HO = (H + 2 * P - KS) / T + 1, WO = (W + 2 * P - KS) / T + 1;
  kevo_parallel(a, N * C, [&](int64_t nc) {
    const double* xc = x + nc * H * W;
    for (int64_t oh = 0; oh < HO; ++oh)
      for (int64_t ow = 0; ow < WO; ++ow) {
        double m = -std::numeric_limits<double>::infinity();
        for (int64_t ih = std::max<int64_t>(0, oh * T - P); ih < std::min(H, oh * T - P + KS); ++ih)
          for (int64_t iw = std::max<int64_t>(0, ow * T - P); iw < std::min(W, ow * T - P + KS);
               ++iw)
            m = std::max(m, xc[ih * W + iw]);
        y[(nc * HO + oh) * WO + ow] = m;
      }
  });
}
