#include "check/kernel_profile.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "util/enum_text.h"
#include "util/json_fields.h"

namespace kevo {
namespace {

constexpr const char* kStallPrefix = "smsp__average_warps_issue_stalled_";
constexpr const char* kStallSuffix = "_per_issue_active.ratio";
// "selected" is the issuing warp, not a stall; the rest are ncu's WarpStateStats reasons.
constexpr const char* kStallReasons[] = {
    "long_scoreboard", "short_scoreboard", "mio_throttle", "lg_throttle",    "barrier",
    "membar",          "math_pipe_throttle", "wait",       "not_selected",   "no_instruction",
    "dispatch_stall",  "drain",            "imc_miss",     "branch_resolving", "tex_throttle",
    "sleeping"};
constexpr size_t kTopStalls = 3;
// A report larger than this is not an ncu report of kevo's few metrics.
constexpr size_t kMaxReportBytes = 4 << 20;

// Where each scalar metric goes.
struct Slot {
  const char* metric;
  double KernelProfile::*field;
};
constexpr Slot kSlots[] = {
    {"dram__throughput.avg.pct_of_peak_sustained_elapsed", &KernelProfile::dram_pct},
    {"lts__throughput.avg.pct_of_peak_sustained_elapsed", &KernelProfile::l2_pct},
    {"sm__throughput.avg.pct_of_peak_sustained_elapsed", &KernelProfile::sm_pct},
    {"sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active", &KernelProfile::tensor_pct},
    {"sm__warps_active.avg.pct_of_peak_sustained_active", &KernelProfile::achieved_occupancy_pct},
    {"sm__maximum_warps_per_active_cycle_pct", &KernelProfile::theoretical_occupancy_pct},
    {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum", &KernelProfile::shared_bank_conflicts},
    {"l1tex__data_pipe_lsu_wavefronts_mem_shared.sum", &KernelProfile::shared_wavefronts},
    {"smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio", &KernelProfile::load_bytes_per_sector},
};
struct IntSlot {
  const char* metric;
  int64_t KernelProfile::*field;
};
constexpr IntSlot kIntSlots[] = {
    {"launch__block_size", &KernelProfile::block_size},
    {"launch__grid_size", &KernelProfile::grid_size},
    {"launch__registers_per_thread", &KernelProfile::registers_per_thread},
    {"launch__shared_mem_per_block_static", &KernelProfile::shared_static_bytes},
    {"launch__shared_mem_per_block_dynamic", &KernelProfile::shared_dynamic_bytes},
};
constexpr const char* kDuration = "gpu__time_duration.sum";
constexpr const char* kLimits[][2] = {{"launch__occupancy_limit_registers", "registers"},
                                      {"launch__occupancy_limit_shared_mem", "shared_memory"},
                                      {"launch__occupancy_limit_warps", "warps"},
                                      {"launch__occupancy_limit_blocks", "blocks"}};
constexpr const char* kSectors[][3] = {
    {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "ld"},
    {"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "st"}};

// One CSV line as ncu writes it: every field quoted, "" inside a field is a quote.
std::vector<std::string> split_csv(std::string_view line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') out.back() += '"', ++i;
      else if (c == '"') quoted = false;
      else out.back() += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else if (c != '\r') {
      out.back() += c;
    }
  }
  return out;
}

// "1,234.5" (ncu groups thousands) -> 1234.5; "n/a" and the like -> nullopt.
std::optional<double> number(std::string_view s) {
  std::string t;
  for (char c : s)
    if (c != ',' && c != ' ') t += c;
  if (t.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(t.c_str(), &end);
  if (end != t.c_str() + t.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// Durations in microseconds whatever unit ncu printed them in.
double to_us(double v, std::string_view unit) {
  if (unit == "nsecond" || unit == "ns") return v / 1e3;
  if (unit == "msecond" || unit == "ms") return v * 1e3;
  if (unit == "second" || unit == "s") return v * 1e6;
  return v;  // usecond
}

std::string safe_name(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (out.size() >= kMaxKernelNameChars) break;
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || std::string_view("_:<>,*&() ").find(c) != std::string_view::npos;
    out += ok ? c : '?';
  }
  return out;
}

// ncu's own error line for a note: printable ASCII, cut.
constexpr size_t kMaxNoteChars = 200;
std::string safe_note(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (out.size() >= kMaxNoteChars) break;
    out += c >= 0x20 && c < 0x7f ? c : ' ';
  }
  return out;
}

// One kernel's metrics by name, before they are sorted into a KernelProfile.
struct RawKernel {
  std::string name;
  std::map<std::string, std::pair<double, std::string>> metrics;  // value, unit
};

KernelProfile build(const RawKernel& raw) {
  KernelProfile k;
  k.name = safe_name(raw.name);
  auto get = [&](const std::string& m) -> std::optional<double> {
    auto it = raw.metrics.find(m);
    if (it == raw.metrics.end()) return std::nullopt;
    return it->second.first;
  };
  for (const auto& s : kSlots)
    if (auto v = get(s.metric)) k.*s.field = *v;
  for (const auto& s : kIntSlots)
    if (auto v = get(s.metric)) k.*s.field = static_cast<int64_t>(std::llround(*v));
  if (auto it = raw.metrics.find(kDuration); it != raw.metrics.end())
    k.duration_us = to_us(it->second.first, it->second.second);
  double fewest = INFINITY;
  for (const auto& [metric, what] : kLimits)
    if (auto v = get(metric); v && *v < fewest) fewest = *v, k.occupancy_limiter = what;
  for (const auto& [sectors, requests, op] : kSectors) {
    auto s = get(sectors), r = get(requests);
    if (!s || !r || *r <= 0) continue;
    (std::string_view(op) == "ld" ? k.load_sectors_per_request : k.store_sectors_per_request) = *s / *r;
  }
  for (const char* reason : kStallReasons)
    if (auto v = get(std::string(kStallPrefix) + reason + kStallSuffix); v && *v > 0)
      k.top_stalls.push_back({reason, *v});
  std::stable_sort(k.top_stalls.begin(), k.top_stalls.end(),
                   [](const StallReason& a, const StallReason& b) { return a.cycles_per_issue > b.cycles_per_issue; });
  if (k.top_stalls.size() > kTopStalls) k.top_stalls.resize(kTopStalls);
  return k;
}

int column(const std::vector<std::string>& header, std::string_view name) {
  auto it = std::find(header.begin(), header.end(), name);
  return it == header.end() ? -1 : static_cast<int>(it - header.begin());
}

// The details page: one row per (kernel, metric).
void read_long(const std::vector<std::vector<std::string>>& rows, const std::vector<std::string>& h,
               std::vector<std::pair<std::string, RawKernel>>& kernels) {
  int id = column(h, "ID"), kn = column(h, "Kernel Name"), mn = column(h, "Metric Name"),
      mu = column(h, "Metric Unit"), mv = column(h, "Metric Value");
  for (const auto& r : rows) {
    if (static_cast<int>(r.size()) != static_cast<int>(h.size())) continue;
    auto v = number(r[mv]);
    if (!v || r[mn].empty()) continue;
    auto it = std::find_if(kernels.begin(), kernels.end(), [&](const auto& k) { return k.first == r[id]; });
    if (it == kernels.end()) it = kernels.insert(kernels.end(), {r[id], RawKernel{r[kn], {}}});
    it->second.metrics[r[mn]] = {*v, mu >= 0 ? r[mu] : ""};
  }
}

// The raw page: one row per kernel, a column per metric, the first row under the header units.
void read_wide(const std::vector<std::vector<std::string>>& rows, const std::vector<std::string>& h,
               std::vector<std::pair<std::string, RawKernel>>& kernels) {
  int id = column(h, "ID"), kn = column(h, "Kernel Name");
  const std::vector<std::string>* units = nullptr;
  for (const auto& r : rows) {
    if (r.size() != h.size()) continue;
    if (!units && r[id].empty()) {
      units = &r;
      continue;
    }
    RawKernel k{r[kn], {}};
    for (size_t c = 0; c < h.size(); ++c)
      if (h[c].find("__") != std::string::npos)
        if (auto v = number(r[c])) k.metrics[h[c]] = {*v, units ? (*units)[c] : ""};
    kernels.push_back({r[id], std::move(k)});
  }
}

Profile not_profiled(std::string_view text) {
  Profile p;
  bool perm = text.find("ERR_NVGPUCTRPERM") != std::string_view::npos;
  p.status = perm ? ProfileStatus::kNoPermission : ProfileStatus::kFailed;
  std::string why;
  size_t at = text.find("==ERROR==");
  if (at != std::string_view::npos) {
    size_t end = text.find('\n', at);
    why = safe_note(text.substr(at + 9, end == std::string_view::npos ? std::string_view::npos : end - at - 9));
  }
  if (perm) p.note = "no permission to read the GPU's performance counters (ERR_NVGPUCTRPERM)";
  else if (text.find("No kernels were profiled") != std::string_view::npos) p.note = "ncu profiled no kernel";
  else p.note = why.empty() ? "ncu wrote no CSV report" : "ncu:" + why;
  return p;
}

// The JSON names of the figures (stable: stored in verdicts).
constexpr std::pair<const char*, double KernelProfile::*> kJsonDoubles[] = {
    {"duration_us", &KernelProfile::duration_us},
    {"dram_pct", &KernelProfile::dram_pct},
    {"l2_pct", &KernelProfile::l2_pct},
    {"sm_pct", &KernelProfile::sm_pct},
    {"tensor_pct", &KernelProfile::tensor_pct},
    {"achieved_occupancy_pct", &KernelProfile::achieved_occupancy_pct},
    {"theoretical_occupancy_pct", &KernelProfile::theoretical_occupancy_pct},
    {"shared_bank_conflicts", &KernelProfile::shared_bank_conflicts},
    {"shared_wavefronts", &KernelProfile::shared_wavefronts},
    {"load_sectors_per_request", &KernelProfile::load_sectors_per_request},
    {"store_sectors_per_request", &KernelProfile::store_sectors_per_request},
    {"load_bytes_per_sector", &KernelProfile::load_bytes_per_sector}};
constexpr std::pair<const char*, int64_t KernelProfile::*> kJsonInts[] = {
    {"block_size", &KernelProfile::block_size},
    {"grid_size", &KernelProfile::grid_size},
    {"registers_per_thread", &KernelProfile::registers_per_thread},
    {"shared_static_bytes", &KernelProfile::shared_static_bytes},
    {"shared_dynamic_bytes", &KernelProfile::shared_dynamic_bytes}};

Result<KernelProfile> kernel_from_json(const nlohmann::json& j, const std::string& where) {
  JsonFields f(j, where);
  KernelProfile k;
  k.name = safe_name(f.get("name", std::string()));
  for (const auto& [key, field] : kJsonDoubles) k.*field = f.get(key, -1.0);
  for (const auto& [key, field] : kJsonInts) k.*field = f.get(key, int64_t{-1});
  k.occupancy_limiter = safe_name(f.get("occupancy_limiter", std::string()));
  auto stalls = j.is_object() ? j.value("top_stalls", nlohmann::json::array()) : nlohmann::json::array();
  if (!stalls.is_array()) return fail("{}: field 'top_stalls' is not an array", where);
  for (const auto& s : stalls) {
    if (k.top_stalls.size() >= kTopStalls) break;
    JsonFields sf(s, where + ": top_stalls");
    k.top_stalls.push_back({safe_name(sf.get("reason", std::string())), sf.get("cycles_per_issue", 0.0)});
    KEVO_TRY(sf.status());
  }
  KEVO_TRY(f.status());
  return k;
}

std::string pct(double v) { return v < 0 ? "?" : fmt::format("{:.0f}%", v); }

}  // namespace

nlohmann::json KernelProfile::to_json() const {
  nlohmann::json j{{"name", name}};
  for (const auto& [key, field] : kJsonDoubles)
    if (this->*field >= 0) j[key] = this->*field;
  for (const auto& [key, field] : kJsonInts)
    if (this->*field >= 0) j[key] = this->*field;
  if (!occupancy_limiter.empty()) j["occupancy_limiter"] = occupancy_limiter;
  j["top_stalls"] = nlohmann::json::array();
  for (const auto& s : top_stalls) j["top_stalls"].push_back({{"reason", s.reason}, {"cycles_per_issue", s.cycles_per_issue}});
  return j;
}

nlohmann::json Profile::to_json() const {
  nlohmann::json j{{"status", to_string(status)}};
  if (!note.empty()) j["note"] = note;
  if (!config.empty()) j["config"] = config;
  if (status != ProfileStatus::kProfiled) return j;
  j["kernels"] = nlohmann::json::array();
  for (const auto& k : kernels) j["kernels"].push_back(k.to_json());
  if (kernels_dropped) j["kernels_dropped"] = kernels_dropped;
  return j;
}

Result<Profile> profile_from_json(const nlohmann::json& j) {
  JsonFields f(j, "profile");
  Profile p;
  std::string st = f.get("status", std::string());
  auto status = parse_profile_status(st);
  if (!status) return fail("profile: field 'status' is '{}', expected profiled, no_ncu, no_permission or failed", st);
  p.status = *status;
  p.note = safe_note(f.get("note", std::string()));
  p.config = f.get("config", std::string());
  p.kernels_dropped = f.get("kernels_dropped", 0);
  KEVO_TRY(f.status());
  auto ks = j.value("kernels", nlohmann::json::array());
  if (!ks.is_array()) return fail("profile: field 'kernels' is not an array");
  for (size_t i = 0; i < ks.size() && static_cast<int>(i) < kMaxProfiledKernels; ++i) {
    auto k = kernel_from_json(ks[i], fmt::format("profile: kernels[{}]", i));
    if (!k) return k.unexpected();
    p.kernels.push_back(std::move(*k));
  }
  return p;
}

std::string Profile::to_text() const {
  if (status != ProfileStatus::kProfiled) return fmt::format("not profiled ({}): {}\n", to_string(status), note);
  std::string s;
  for (size_t i = 0; i < kernels.size(); ++i) {
    const auto& k = kernels[i];
    s += fmt::format("kernel {} {}: {:.4g} us, block {}, grid {}, {} regs/thread, {} B smem/block\n", i + 1, k.name,
                     k.duration_us, k.block_size, k.grid_size, k.registers_per_thread,
                     std::max<int64_t>(k.shared_static_bytes, 0) + std::max<int64_t>(k.shared_dynamic_bytes, 0));
    s += fmt::format("  DRAM {} L2 {} SM {} tensor {} of peak; occupancy {} of {}{}\n", pct(k.dram_pct), pct(k.l2_pct),
                     pct(k.sm_pct), pct(k.tensor_pct), pct(k.achieved_occupancy_pct), pct(k.theoretical_occupancy_pct),
                     k.occupancy_limiter.empty() ? "" : " (limit: " + k.occupancy_limiter + ")");
    std::string stalls;
    for (const auto& st : k.top_stalls) stalls += fmt::format("{}{} {:.2f}", stalls.empty() ? "" : ", ", st.reason, st.cycles_per_issue);
    s += fmt::format("  stalls (cycles/issue): {}; sectors/request ld {:.2f} st {:.2f}; bank conflicts {:.0f}\n",
                     stalls.empty() ? "-" : stalls, k.load_sectors_per_request, k.store_sectors_per_request,
                     k.shared_bank_conflicts);
  }
  if (kernels_dropped) s += fmt::format("({} more launches not kept)\n", kernels_dropped);
  return s;
}

namespace {

constexpr EnumText<ProfileStatus> kProfileStatusTexts[] = {
    {ProfileStatus::kProfiled, "profiled"},
    {ProfileStatus::kNoNcu, "no_ncu"},
    {ProfileStatus::kNoPermission, "no_permission"},
    {ProfileStatus::kFailed, "failed"},
};

}  // namespace

const char* to_string(ProfileStatus s) { return enum_text(kProfileStatusTexts, s, "failed"); }

std::optional<ProfileStatus> parse_profile_status(std::string_view s) { return enum_parse(kProfileStatusTexts, s); }

const std::vector<std::string>& ncu_metrics() {
  static const std::vector<std::string> list = [] {
    std::vector<std::string> m{kDuration};
    for (const auto& s : kSlots) m.push_back(s.metric);
    for (const auto& s : kIntSlots) m.push_back(s.metric);
    for (const auto& l : kLimits) m.push_back(l[0]);
    for (const auto& s : kSectors) m.push_back(s[0]), m.push_back(s[1]);
    for (const char* r : kStallReasons) m.push_back(std::string(kStallPrefix) + r + kStallSuffix);
    return m;
  }();
  return list;
}

std::vector<std::string> ncu_arguments(const std::string& log_file) {
  std::string metrics;
  for (const auto& m : ncu_metrics()) metrics += (metrics.empty() ? "" : ",") + m;
  return {"--csv", "--print-units", "base", "--metrics", metrics, "--launch-count",
          std::to_string(kMaxProfiledKernels + 1), "--log-file", log_file};
}

Profile read_ncu_report(std::string_view text) {
  if (text.size() > kMaxReportBytes) text = text.substr(0, kMaxReportBytes);
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    std::string_view line = text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    pos = end == std::string_view::npos ? text.size() : end + 1;
    if (!line.starts_with('"')) continue;  // ==PROF== lines and whatever the program printed
    auto fields = split_csv(line);
    if (header.empty()) {
      if (column(fields, "ID") >= 0 && column(fields, "Kernel Name") >= 0) header = std::move(fields);
      continue;
    }
    rows.push_back(std::move(fields));
  }
  if (header.empty()) return not_profiled(text);
  std::vector<std::pair<std::string, RawKernel>> raw;
  if (column(header, "Metric Name") >= 0 && column(header, "Metric Value") >= 0) read_long(rows, header, raw);
  else read_wide(rows, header, raw);
  Profile p;
  if (raw.empty()) {
    p.note = "ncu's report holds no kernel";
    return p;
  }
  p.status = ProfileStatus::kProfiled;
  for (const auto& [id, k] : raw) {
    if (static_cast<int>(p.kernels.size()) >= kMaxProfiledKernels) {
      ++p.kernels_dropped;
      continue;
    }
    p.kernels.push_back(build(k));
  }
  return p;
}

}  // namespace kevo
