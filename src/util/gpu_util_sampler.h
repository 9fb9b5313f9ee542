// The GPUs' own utilization while kevo works: a background thread reads a source (NVML's
// utilization rate, util/nvml.h, or a fake in tests) every ~200 ms and keeps the running sum, so
// the mean over any window (since the start, or since a mark such as the search's start) costs
// nothing. A source that could not be opened makes an unavailable sampler: its figures are
// "not known" (nullopt), never 0%, and its status says why once.
// Thread-safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "util/result.h"

namespace kevo {

// Why a utilization figure is not known (kOk: it is, or will be once sampled).
enum class GpuUtilCode {
  kOk,
  kLibraryMissing,  // libnvidia-ml.so.1 cannot be loaded (no NVIDIA driver on this host)
  kSymbolMissing,   // the library lacks a function kevo calls (too old a driver)
  kInitFailed,      // nvmlInit_v2 refused (driver/library mismatch, no permission)
  kDeviceNotFound,  // a GPU kevo evaluates on is not one NVML knows (a MIG instance, a bad name)
  kNoGpus,          // nothing evaluates on this host (--gpus none, a fake evaluator)
  kQueryFailed,     // a read failed; samples before and after it still count
};
const char* to_string(GpuUtilCode c);

struct GpuUtilStatus {
  GpuUtilCode code = GpuUtilCode::kOk;
  std::string message;
  bool ok() const { return code == GpuUtilCode::kOk; }
};

// One reading of the GPUs watched: the mean over them of the percent of the driver's last sample
// period in which a kernel ran. An error skips the reading.
class GpuUtilSource {
 public:
  virtual ~GpuUtilSource() = default;
  virtual Result<double> read_percent() = 0;
};

class GpuUtilSampler {
 public:
  // NVML's sample period is 1/6 s to 1 s by product; reading faster only repeats its figure.
  static constexpr std::chrono::milliseconds kPeriod{200};

  // Samples `source` at once and then every `period` until stop() or destruction.
  explicit GpuUtilSampler(std::unique_ptr<GpuUtilSource> source, std::chrono::milliseconds period = kPeriod);
  // Unavailable: no thread, every mean is nullopt, status() is `why`.
  explicit GpuUtilSampler(GpuUtilStatus why);
  ~GpuUtilSampler();
  GpuUtilSampler(const GpuUtilSampler&) = delete;
  GpuUtilSampler& operator=(const GpuUtilSampler&) = delete;

  // A point to measure from: the samples taken so far.
  struct Mark {
    double sum = 0;
    int64_t count = 0;
  };
  Mark mark() const;
  // The mean utilization (0..1) of the samples taken after `from` (and up to `to`); nullopt when
  // the sampler is unavailable or none was taken in the window.
  std::optional<double> mean_since(const Mark& from) const;
  std::optional<double> mean_between(const Mark& from, const Mark& to) const;
  std::optional<double> mean() const { return mean_since({}); }

  bool available() const { return available_; }
  // Why figures are missing: the opening failure, else the first failed read (kOk: none).
  GpuUtilStatus status() const;
  int64_t samples() const { return mark().count; }
  // Ends the thread (idempotent); the figures taken stay readable.
  void stop();

 private:
  void loop(std::chrono::milliseconds period);

  std::unique_ptr<GpuUtilSource> source_;
  const bool available_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  Mark total_;
  GpuUtilStatus status_;
  std::thread thread_;  // last: started once everything it reads exists
};

// "86%" or "n/a" (not known), for status lines and summaries.
std::string percent_or_na(const std::optional<double>& fraction);

}  // namespace kevo
