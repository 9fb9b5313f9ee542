#include "util/gpu_util_sampler.h"

#include <fmt/format.h>

#include "util/enum_text.h"

namespace kevo {

namespace {

// Logged and in `kevo doctor`: a value's text never changes.
constexpr EnumText<GpuUtilCode> kGpuUtilCodeTexts[] = {
    {GpuUtilCode::kOk, "ok"},
    {GpuUtilCode::kLibraryMissing, "library_missing"},
    {GpuUtilCode::kSymbolMissing, "symbol_missing"},
    {GpuUtilCode::kInitFailed, "init_failed"},
    {GpuUtilCode::kDeviceNotFound, "device_not_found"},
    {GpuUtilCode::kNoGpus, "no_gpus"},
    {GpuUtilCode::kQueryFailed, "query_failed"},
};

}  // namespace

const char* to_string(GpuUtilCode c) { return enum_text(kGpuUtilCodeTexts, c, "unknown"); }

GpuUtilSampler::GpuUtilSampler(std::unique_ptr<GpuUtilSource> source, std::chrono::milliseconds period)
    : source_(std::move(source)), available_(source_ != nullptr) {
  if (!available_) {
    status_ = {GpuUtilCode::kNoGpus, "no source to sample"};
    return;
  }
  thread_ = std::thread([this, period] { loop(period); });
}

GpuUtilSampler::GpuUtilSampler(GpuUtilStatus why) : available_(false), status_(std::move(why)) {
  if (status_.ok()) status_ = {GpuUtilCode::kNoGpus, "not sampled"};
}

GpuUtilSampler::~GpuUtilSampler() { stop(); }

void GpuUtilSampler::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void GpuUtilSampler::loop(std::chrono::milliseconds period) {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    lock.unlock();
    // The read (a driver call) runs unlocked, so readers of the figures never wait for it.
    Result<double> r = source_->read_percent();
    lock.lock();
    if (r) {
      total_.sum += *r / 100.0;
      ++total_.count;
    } else if (status_.ok()) {
      status_ = {GpuUtilCode::kQueryFailed, r.error().message};
    }
    cv_.wait_for(lock, period, [this] { return stopping_; });
  }
}

GpuUtilSampler::Mark GpuUtilSampler::mark() const {
  std::lock_guard lock(mu_);
  return total_;
}

std::optional<double> GpuUtilSampler::mean_between(const Mark& from, const Mark& to) const {
  if (!available_ || to.count <= from.count) return std::nullopt;
  return (to.sum - from.sum) / static_cast<double>(to.count - from.count);
}

std::optional<double> GpuUtilSampler::mean_since(const Mark& from) const { return mean_between(from, mark()); }

GpuUtilStatus GpuUtilSampler::status() const {
  std::lock_guard lock(mu_);
  return status_;
}

std::string percent_or_na(const std::optional<double>& fraction) {
  if (!fraction) return "n/a";
  return fmt::format("{}%", static_cast<int>(*fraction * 100 + 0.5));
}

}  // namespace kevo
