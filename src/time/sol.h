// Speed of light: the device's measured ceilings (copy bandwidth, arithmetic peaks), cached per
// device, turned into a floor time for a task's flops and bytes.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "task/dtype.h"
#include "util/result.h"

namespace kevo {

struct DeviceCeilings {
  std::string name, uuid;
  double copy_gbps = 0;       // device-to-device copy, bytes read + written per second / 1e9
  double fp32_tflops = 0;     // FMA on the CUDA cores
  double tensor_tflops = 0;   // bf16 tensor cores (measured with mma.sync; wgmma can go higher)
  nlohmann::json to_json() const;
  static DeviceCeilings from_json(const nlohmann::json& j);
};

struct SolFloor {
  double floor_ms = 0;       // max(flops/peak, bytes/bandwidth) with the peak that fits the precision
  double impossible_ms = 0;  // below this a measured time cannot be real (generous margins)
  const char* bound = "memory";  // which term dominates
};

SolFloor sol_floor(const DeviceCeilings& d, double flops, double bytes, DType precision);

}  // namespace kevo
