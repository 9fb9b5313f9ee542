#include "evolve/events.h"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "store/run_db.h"
#include "util/gpu_util_sampler.h"

namespace kevo::evolve {

namespace {
std::string minutes(double s) {
  const int secs = static_cast<int>(s);
  return fmt::format("{}m{:02d}s", secs / 60, secs % 60);
}
}  // namespace

std::string Progress::status_line() const {
  if (phase == Phase::kBaseline)
    return fmt::format("run {}  baseline: {}  {}", run_id, detail.empty() ? "checking" : detail, minutes(elapsed_s));
  if (phase == Phase::kHeldOut)
    return fmt::format("run {}  {}/{} done  held-out re-verification: {}  {}", run_id, done, budget, detail,
                       minutes(elapsed_s));
  int pct = done ? static_cast<int>(100.0 * valid / done + 0.5) : 0;
  std::string tok = tokens >= 1000000 ? fmt::format("{:.1f}M", tokens / 1e6)
                    : tokens >= 1000  ? fmt::format("{}k", tokens / 1000)
                                      : fmt::format("{}", tokens);
  return fmt::format("run {}  {}/{} done  valid {}%  best {}  tokens {}  ${:.2f}  evaluators busy {}  GPU util {}  {} in "
                     "flight  {}{}",
                     run_id, done, budget, pct, best_speedup > 0 ? fmt::format("{:.2f}x", best_speedup) : "-",
                     tok, cost_usd, percent_or_na(gpu_busy), gpu_util_text(gpu_util),
                     in_flight, minutes(elapsed_s),
                     eta_s >= 0 ? "  ETA " + minutes(eta_s) : "");
}

std::string gpu_util_text(const std::optional<double>& fraction) {
  return fraction ? percent_or_na(fraction) + " (NVML)" : "n/a";
}

Result<std::unique_ptr<JsonlEventSink>> JsonlEventSink::open(const std::filesystem::path& path) {
  std::FILE* f = std::fopen(path.c_str(), "a");
  if (!f) return fail("{}: cannot open for events: {}", path.string(), std::strerror(errno));
  return std::unique_ptr<JsonlEventSink>(new JsonlEventSink(f));
}

JsonlEventSink::~JsonlEventSink() { std::fclose(f_); }

void JsonlEventSink::emit(int64_t run_id, const std::string& kind, const nlohmann::json& data) {
  nlohmann::json j = data.is_object() ? data : nlohmann::json{{"data", data}};
  j["t"] = store::unix_now();
  j["run"] = run_id;
  j["kind"] = kind;
  std::lock_guard lock(mu_);
  std::fprintf(f_, "%s\n", j.dump().c_str());
  std::fflush(f_);
}

}  // namespace kevo::evolve
