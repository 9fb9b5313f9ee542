// CPU reference for avgpool2d (zero padding counted in the divisor), in double; parallel over
// (n, c) planes.
#include <kevo/reference.h>

#include <algorithm>

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
        double s = 0;
        for (int64_t ih = std::max<int64_t>(0, oh * T - P); ih < std::min(H, oh * T - P + KS); ++ih)
          for (int64_t iw = std::max<int64_t>(0, ow * T - P); iw < std::min(W, ow * T - P + KS);
               ++iw)
            s += xc[ih * W + iw];
        y[(nc * HO + oh) * WO + ow] = s / static_cast<double>(KS * KS);
      }
  });
}
