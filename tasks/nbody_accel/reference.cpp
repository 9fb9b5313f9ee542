// CPU reference for nbody_accel (all pairs, Plummer softening), in double; parallel over bodies.
#include <kevo/reference.h>

#include <cmath>

KEVO_REFERENCE void kevo_reference(const kevo_ref_args* a) {
  const double* pos = a->inputs[0].data;
  const double* mass = a->inputs[1].data;
  double* acc = a->outputs[0].data;
  const int64_t n = a->dims[0];
  const double eps2 = a->scalars[0];
  kevo_parallel(a, n, [&](int64_t i) {
    double ax = 0, ay = 0, az = 0;
    for (int64_t j = 0; j < n; ++j) {
      if (j == i) continue;  // zero (0 / eps^3); skipped so eps2 = 0 is defined too
      const double dx = pos[3 * j] - pos[3 * i], dy = pos[3 * j + 1] - pos[3 * i + 1],
                   dz = pos[3 * j + 2] - pos[3 * i + 2];
      const double r2 = dx * dx + dy * dy + dz * dz + eps2;
      const double f = mass[j] / (r2 * std::sqrt(r2));
      ax += f * dx;
      ay += f * dy;
      az += f * dz;
    }
    acc[3 * i] = ax;
    acc[3 * i + 1] = ay;
    acc[3 * i + 2] = az;
  });
}
