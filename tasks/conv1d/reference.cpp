// CPU reference for conv1d (stride 1, zero padding P), in double precision; parallel over (n, k).
#include <kevo/reference.h>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* x = a->inputs[0].data;
  const double* w = a->inputs[1].data;
  double* y = a->outputs[0].data;
  const int64_t* d = a->dims;
  const int64_t N = d[0], C = d[1], L = d[2], K = d[3], R = d[4], P = d[5];
  const int64_t LO = L + 2 * P - R + 1;
  kevo_parallel(a, N * K, [&](int64_t nk) {
    const int64_t n = nk / K, k = nk % K;
    double* yo = y + nk * LO;
    for (int64_t o = 0; o < LO; ++o) yo[o] = 0;
    for (int64_t c = 0; c < C; ++c)
      for (int64_t r = 0; r < R; ++r) {
        const double wv = w[(k * C + c) * R + r];
        const double* xc = x + (n * C + c) * L;
        for (int64_t o = 0; o < LO; ++o) {
          const int64_t i = o + r - P;
          if (i >= 0 && i < L) yo[o] += xc[i] * wv;
        }
      }
  });
}
