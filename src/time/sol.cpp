#include "time/sol.h"

#include <algorithm>

namespace kevo {

nlohmann::json DeviceCeilings::to_json() const {
  return {{"name", name}, {"uuid", uuid}, {"copy_gbps", copy_gbps},
          {"fp32_tflops", fp32_tflops}, {"tensor_tflops", tensor_tflops}};
}

DeviceCeilings DeviceCeilings::from_json(const nlohmann::json& j) {
  DeviceCeilings d;
  d.name = j.value("name", "");
  d.uuid = j.value("uuid", "");
  d.copy_gbps = j.value("copy_gbps", 0.0);
  d.fp32_tflops = j.value("fp32_tflops", 0.0);
  d.tensor_tflops = j.value("tensor_tflops", 0.0);
  return d;
}

SolFloor sol_floor(const DeviceCeilings& d, double flops, double bytes, DType precision) {
  SolFloor f;
  if (d.copy_gbps <= 0) return f;
  double peak = is_float(precision) && precision != DType::F32 ? d.tensor_tflops : d.fp32_tflops;
  double t_mem = bytes / (d.copy_gbps * 1e9) * 1e3;
  double t_math = peak > 0 ? flops / (peak * 1e12) * 1e3 : 0;
  f.floor_ms = std::max(t_mem, t_math);
  f.bound = t_math > t_mem ? "compute" : "memory";
  // The impossibility line allows a kernel to beat our measured ceilings: 1.5x the copy bandwidth
  // and 4x the fastest measured arithmetic (tf32/wgmma paths exceed what the probe reaches).
  double best_peak = std::max(d.fp32_tflops, d.tensor_tflops) * 4;
  double imp_mem = bytes / (d.copy_gbps * 1.5e9) * 1e3;
  double imp_math = best_peak > 0 ? flops / (best_peak * 1e12) * 1e3 : 0;
  f.impossible_ms = std::max(imp_mem, imp_math);
  return f;
}

}  // namespace kevo
