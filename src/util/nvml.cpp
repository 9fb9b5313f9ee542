#include "util/nvml.h"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <sstream>

#include <fmt/format.h>

namespace kevo {

namespace {

// The few NVML declarations kevo needs (nvml.h is not on a machine without the driver's SDK).
using nvmlReturn_t = int;
constexpr nvmlReturn_t kNvmlSuccess = 0;
struct nvmlDevice_st;
using nvmlDevice_t = nvmlDevice_st*;
struct nvmlUtilization_t {
  unsigned int gpu;     // percent of the sample period in which a kernel ran
  unsigned int memory;  // percent of it in which device memory was read or written
};

struct NvmlApi {
  nvmlReturn_t (*init)(void) = nullptr;
  nvmlReturn_t (*shutdown)(void) = nullptr;
  nvmlReturn_t (*by_index)(unsigned int, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*by_uuid)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*utilization)(nvmlDevice_t, nvmlUtilization_t*) = nullptr;
  const char* (*error_string)(nvmlReturn_t) = nullptr;

  std::string why(nvmlReturn_t r) const {
    const char* s = error_string ? error_string(r) : nullptr;
    return s ? fmt::format("{} (NVML error {})", s, r) : fmt::format("NVML error {}", r);
  }
};

class NvmlSource final : public GpuUtilSource {
 public:
  NvmlSource(void* lib, NvmlApi api, std::vector<nvmlDevice_t> devices, std::vector<std::string> names)
      : lib_(lib), api_(api), devices_(std::move(devices)), names_(std::move(names)) {}
  ~NvmlSource() override {
    api_.shutdown();
    dlclose(lib_);
  }
  Result<double> read_percent() override {
    double sum = 0;
    for (size_t i = 0; i < devices_.size(); ++i) {
      nvmlUtilization_t u{};
      if (nvmlReturn_t r = api_.utilization(devices_[i], &u); r != kNvmlSuccess)
        return fail("GPU {}: nvmlDeviceGetUtilizationRates: {}", names_[i], api_.why(r));
      sum += u.gpu;
    }
    return sum / static_cast<double>(devices_.size());
  }

 private:
  void* lib_;
  NvmlApi api_;
  std::vector<nvmlDevice_t> devices_;
  std::vector<std::string> names_;
};

template <class F>
bool bind(void* lib, const char* name, F& out) {
  out = reinterpret_cast<F>(dlsym(lib, name));
  return out != nullptr;
}

// The devices of `gpus`, with NVML initialised; an error leaves it shut down.
NvmlOpened open_devices(void* lib, const NvmlApi& api, const std::vector<std::string>& gpus) {
  if (nvmlReturn_t r = api.init(); r != kNvmlSuccess)
    return {nullptr, {GpuUtilCode::kInitFailed, "nvmlInit_v2: " + api.why(r)}};
  const char* cvd = std::getenv("CUDA_VISIBLE_DEVICES");
  std::vector<nvmlDevice_t> devices;
  for (const auto& g : gpus) {
    auto ref = nvml_device_ref(g, cvd);
    nvmlDevice_t d = nullptr;
    nvmlReturn_t r = kNvmlSuccess;
    std::string what;
    if (!ref) {
      what = ref.error().message;
    } else {
      r = ref->by_uuid ? api.by_uuid(ref->uuid.c_str(), &d) : api.by_index(ref->index, &d);
      if (r != kNvmlSuccess) what = api.why(r);
    }
    if (!what.empty()) {
      api.shutdown();
      return {nullptr, {GpuUtilCode::kDeviceNotFound, fmt::format("GPU '{}': {}", g.empty() ? "default" : g, what)}};
    }
    devices.push_back(d);
  }
  return {std::make_unique<NvmlSource>(lib, api, std::move(devices), gpus), {}};
}

}  // namespace

Result<NvmlDeviceRef> nvml_device_ref(const std::string& gpu, const char* cuda_visible_devices) {
  std::string name = gpu;
  if (name.empty() && cuda_visible_devices && *cuda_visible_devices) {
    std::stringstream ss(cuda_visible_devices);
    std::getline(ss, name, ',');
  }
  name.erase(std::remove_if(name.begin(), name.end(), [](unsigned char c) { return std::isspace(c); }), name.end());
  if (name.empty()) return NvmlDeviceRef{};  // CUDA's default device: the first one
  if (std::all_of(name.begin(), name.end(), [](unsigned char c) { return std::isdigit(c); }) && name.size() < 4)
    return NvmlDeviceRef{false, static_cast<unsigned>(std::stoul(name)), ""};
  if (name.rfind("GPU-", 0) == 0) return NvmlDeviceRef{true, 0, name};
  if (name.rfind("MIG-", 0) == 0) return fail("{} is a MIG instance: NVML gives no utilization per instance", name);
  return fail("'{}' is neither a device index nor a GPU UUID", name);
}

NvmlOpened open_nvml(const std::vector<std::string>& gpus, const std::string& library) {
  if (gpus.empty()) return {nullptr, {GpuUtilCode::kNoGpus, "no GPU evaluates on this host"}};
  void* lib = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* e = dlerror();
    return {nullptr, {GpuUtilCode::kLibraryMissing, fmt::format("cannot load {}: {}", library, e ? e : "?")}};
  }
  NvmlApi api;
  // The first function the library lacks, if any.
  const char* missing = nullptr;
  auto need = [&](const char* name, auto& fn) {
    if (!missing && !bind(lib, name, fn)) missing = name;
  };
  need("nvmlInit_v2", api.init);
  need("nvmlShutdown", api.shutdown);
  need("nvmlDeviceGetHandleByIndex_v2", api.by_index);
  need("nvmlDeviceGetHandleByUUID", api.by_uuid);
  need("nvmlDeviceGetUtilizationRates", api.utilization);
  need("nvmlErrorString", api.error_string);
  if (missing) {
    dlclose(lib);
    return {nullptr, {GpuUtilCode::kSymbolMissing, fmt::format("{} has no {}", library, missing)}};
  }
  NvmlOpened o = open_devices(lib, api, gpus);
  if (!o.source) dlclose(lib);
  return o;
}

std::unique_ptr<GpuUtilSampler> nvml_sampler(const std::vector<std::string>& gpus, const std::string& library) {
  NvmlOpened o = open_nvml(gpus, library);
  if (!o.source) return std::make_unique<GpuUtilSampler>(o.status);
  return std::make_unique<GpuUtilSampler>(std::move(o.source));
}

}  // namespace kevo
