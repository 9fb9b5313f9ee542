// NVML's GPU utilization, loaded at run time (dlopen of libnvidia-ml.so.1), so kevo needs no NVIDIA
// driver to build, start or test; without one the sampler is unavailable and says why.
//
// Which GPU: kevo names GPUs as `--gpus` does (evolve/eval_pool.h): each name is what its
// evaluator's runners get as CUDA_VISIBLE_DEVICES, so it is read the way CUDA reads that variable
// from a clean environment: an integer is a device index, `GPU-...` a UUID (looked up with
// nvmlDeviceGetHandleByUUID). The empty name (one evaluator on the default device) is the first
// entry of kevo's own CUDA_VISIBLE_DEVICES, else device 0. `MIG-...` instances are refused
// (NVML gives no utilization per MIG instance). NVML numbers devices in PCI bus order, CUDA
// fastest first unless CUDA_DEVICE_ORDER=PCI_BUS_ID: on a host of identical GPUs the two agree;
// on a mixed one, name GPUs by UUID.
// Thread-safety: a source is read by one sampler thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "util/gpu_util_sampler.h"

namespace kevo {

inline constexpr const char* kNvmlLibrary = "libnvidia-ml.so.1";

// How NVML finds one of kevo's GPU names (above); an error: it cannot.
struct NvmlDeviceRef {
  bool by_uuid = false;
  unsigned index = 0;
  std::string uuid;
};
Result<NvmlDeviceRef> nvml_device_ref(const std::string& gpu, const char* cuda_visible_devices);

// The mean utilization of `gpus` through NVML; `library` is for tests (a name that does not exist).
// A null source comes with the reason (kLibraryMissing, kSymbolMissing, kInitFailed,
// kDeviceNotFound, kNoGpus for an empty list).
struct NvmlOpened {
  std::unique_ptr<GpuUtilSource> source;
  GpuUtilStatus status;
};
NvmlOpened open_nvml(const std::vector<std::string>& gpus, const std::string& library = kNvmlLibrary);

// A sampler of `gpus` (unavailable, with its reason, when NVML cannot be opened).
std::unique_ptr<GpuUtilSampler> nvml_sampler(const std::vector<std::string>& gpus,
                                             const std::string& library = kNvmlLibrary);

}  // namespace kevo
