// CPU reference for stencil3d_7pt (zero boundary), in double precision; parallel over planes.
#include <kevo/reference.h>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* x = a->inputs[0].data;
  double* y = a->outputs[0].data;
  const int64_t D = a->dims[0], H = a->dims[1], W = a->dims[2];
  const double c0 = a->scalars[0], c1 = a->scalars[1];
  auto at = [&](int64_t z, int64_t r, int64_t c) {
    if (z < 0 || z >= D || r < 0 || r >= H || c < 0 || c >= W) return 0.0;
    return x[(z * H + r) * W + c];
  };
  kevo_parallel(a, D, [&](int64_t z) {
    for (int64_t r = 0; r < H; ++r)
      for (int64_t c = 0; c < W; ++c)
        y[(z * H + r) * W + c] =
            c0 * at(z, r, c) + c1 * (at(z - 1, r, c) + at(z + 1, r, c) + at(z, r - 1, c) +
                                     at(z, r + 1, c) + at(z, r, c - 1) + at(z, r, c + 1));
  });
}
