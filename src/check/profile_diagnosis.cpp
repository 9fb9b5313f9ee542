#include "check/profile_diagnosis.h"

#include <algorithm>

#include <fmt/format.h>

namespace kevo {
namespace {

// A unit at 60% of its peak or more is what the kernel is bound by (ncu's SOL rule uses 60%).
constexpr double kBoundPct = 60;
// Below 40% on every unit the kernel waits on latency rather than throughput.
constexpr double kLatencyPct = 40;
// A load using under half of each 32-byte sector it fetches wastes most of its bandwidth.
constexpr double kUncoalescedBytes = 16;
// More than 10% extra shared-memory wavefronts from bank conflicts is worth naming.
constexpr double kConflictShare = 0.10;
// Achieved occupancy under 50% is worth naming (with what limits it).
constexpr double kLowOccupancyPct = 50;

std::string bound_part(const KernelProfile& k) {
  double mem = std::max(k.dram_pct, k.l2_pct);
  const char* unit = k.dram_pct >= k.l2_pct ? "DRAM" : "L2";
  if (mem < 0 && k.sm_pct < 0) return {};
  if (mem >= kBoundPct && mem >= k.sm_pct) return fmt::format("memory-bound: {} {:.0f}% of peak", unit, mem);
  if (k.sm_pct >= kBoundPct) {
    std::string tensor = k.tensor_pct >= 0 ? fmt::format(", tensor pipes {:.0f}%", k.tensor_pct) : "";
    return fmt::format("compute-bound: SM {:.0f}% of peak{}", k.sm_pct, tensor);
  }
  if (mem < kLatencyPct && k.sm_pct < kLatencyPct)
    return fmt::format("latency-bound: DRAM {:.0f}%, SM {:.0f}% of peak", std::max(k.dram_pct, 0.0),
                       std::max(k.sm_pct, 0.0));
  return fmt::format("neither bound: {} {:.0f}%, SM {:.0f}% of peak", unit, std::max(mem, 0.0), std::max(k.sm_pct, 0.0));
}

std::string access_part(const KernelProfile& k) {
  std::string out;
  if (k.load_bytes_per_sector >= 0 && k.load_bytes_per_sector < kUncoalescedBytes) {
    out = fmt::format("loads use {:.0f} of 32 bytes per sector", k.load_bytes_per_sector);
    if (k.load_sectors_per_request >= 0) out += fmt::format(" ({:.1f} sectors/request)", k.load_sectors_per_request);
    out += ": uncoalesced";
  }
  if (k.shared_bank_conflicts > 0 && k.shared_wavefronts > 0 &&
      k.shared_bank_conflicts > kConflictShare * k.shared_wavefronts) {
    if (!out.empty()) out += "; ";
    out += fmt::format("shared-memory bank conflicts: {:.0f}% of wavefronts",
                       100 * k.shared_bank_conflicts / k.shared_wavefronts);
  }
  return out;
}

std::string occupancy_part(const KernelProfile& k) {
  if (k.achieved_occupancy_pct < 0 || k.achieved_occupancy_pct >= kLowOccupancyPct) return {};
  std::string out = fmt::format("occupancy {:.0f}%", k.achieved_occupancy_pct);
  if (k.theoretical_occupancy_pct >= 0 && k.theoretical_occupancy_pct < 100) {
    out += fmt::format(" (theoretical {:.0f}%", k.theoretical_occupancy_pct);
    if (k.occupancy_limiter == "registers" && k.registers_per_thread > 0)
      out += fmt::format(", limit: registers, {}/thread", k.registers_per_thread);
    else if (!k.occupancy_limiter.empty())
      out += ", limit: " + k.occupancy_limiter;
    out += ")";
  }
  return out;
}

std::string stall_part(const KernelProfile& k) {
  if (k.top_stalls.empty()) return {};
  std::string out = "top stalls: ";
  for (size_t i = 0; i < k.top_stalls.size(); ++i)
    out += fmt::format("{}{} {:.1f}", i ? ", " : "", k.top_stalls[i].reason, k.top_stalls[i].cycles_per_issue);
  return out + " cycles/issue";
}

}  // namespace

std::string diagnose_profile(const Profile& p) {
  if (p.status != ProfileStatus::kProfiled || p.kernels.empty()) return {};
  // The longest kernel is where the time goes; the others are named only as a count.
  auto longest = std::max_element(p.kernels.begin(), p.kernels.end(), [](const auto& a, const auto& b) {
    return a.duration_us < b.duration_us;
  });
  std::vector<std::string> parts;
  size_t n = p.kernels.size() + static_cast<size_t>(p.kernels_dropped);
  if (n > 1) {
    double total = 0;
    for (const auto& k : p.kernels) total += std::max(k.duration_us, 0.0);
    std::string share = total > 0 && longest->duration_us >= 0
                            ? fmt::format(", {:.0f}% of GPU time", 100 * longest->duration_us / total)
                            : "";
    parts.push_back(fmt::format("{} kernels; longest (#{}{})", n, longest - p.kernels.begin() + 1, share));
  }
  for (auto part : {bound_part(*longest), access_part(*longest), occupancy_part(*longest), stall_part(*longest)})
    if (!part.empty()) parts.push_back(std::move(part));
  if (parts.empty() || (n > 1 && parts.size() == 1)) return {};
  // Whole parts only: a cut one would read as a different figure.
  std::string out;
  for (const auto& part : parts) {
    size_t add = (out.empty() ? 0 : 2) + part.size();
    if (out.size() + add > kMaxDiagnosisChars) break;
    out += (out.empty() ? "" : "; ") + part;
  }
  return out;
}

}  // namespace kevo
