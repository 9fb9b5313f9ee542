#include "evolve/features.h"

#include <algorithm>
#include <regex>

#include <fmt/format.h>

#include "util/json_fields.h"

namespace kevo::evolve {

std::string strip_comments(std::string_view src) {
  std::string out(src);
  enum { kCode, kLine, kBlock, kStr, kChar } st = kCode;
  for (size_t i = 0; i < out.size(); ++i) {
    char c = out[i], n = i + 1 < out.size() ? out[i + 1] : '\0';
    switch (st) {
      case kCode:
        if (c == '/' && n == '/') st = kLine, out[i] = ' ';
        else if (c == '/' && n == '*') st = kBlock, out[i] = ' ';
        else if (c == '"') st = kStr;
        else if (c == '\'') st = kChar;
        break;
      case kLine:
        if (c == '\n') st = kCode;
        else out[i] = ' ';
        break;
      case kBlock:
        if (c == '*' && n == '/') out[i] = out[i + 1] = ' ', ++i, st = kCode;
        else if (c != '\n') out[i] = ' ';
        break;
      case kStr:
      case kChar:
        if (c == '\\') {
          out[i] = ' ';
          if (i + 1 < out.size() && out[i + 1] != '\n') out[++i] = ' ';
        } else if ((st == kStr && c == '"') || (st == kChar && c == '\'')) st = kCode;
        else if (c != '\n') out[i] = ' ';
        break;
    }
  }
  return out;
}

KernelFeatures extract_features(std::string_view source, const std::vector<KernelResources>& kernels,
                                bool have_report) {
  KernelFeatures f;
  f.known_resources = have_report;
  for (const auto& k : kernels) {
    f.registers = std::max(f.registers, k.registers);
    f.shared_bytes = std::max(f.shared_bytes, k.shared_bytes);
  }
  std::string code = strip_comments(source);
  auto has = [&](const char* re) { return std::regex_search(code, std::regex(re)); };
  f.dynamic_shared = has(R"(extern\s+__shared__)");
  f.tensor_cores = has(R"(\bwmma::|\bmma\.sync|\bwgmma|\bmma_sync\b|\bSM80_16x8|\bSM90_64x|\bhmma)");
  f.vector_loads =
      has(R"(\b(float|int|uint|double|half|short|char)[24]\b|__half2|__nv_bfloat162|\bld\.global(\.nc)?\.v[24]|\bld\.shared\.v[24])");
  f.warp_shuffles = has(R"(__shfl_(xor_|up_|down_)?sync|\breduce\s*\(\s*\w+\s*,|cg::reduce|__reduce_\w+_sync)");
  return f;
}

std::string KernelFeatures::cell() const {
  int r = registers <= 32 ? 0 : registers <= 64 ? 1 : registers <= 128 ? 2 : 3;
  int s = shared_bytes == 0 ? 0 : shared_bytes <= 16 * 1024 ? 1 : shared_bytes <= 48 * 1024 ? 2 : 3;
  if (dynamic_shared) s = std::max(s, 1);
  return fmt::format("r{}-s{}-tc{}-v{}-w{}", r, s, int(tensor_cores), int(vector_loads), int(warp_shuffles));
}

nlohmann::json KernelFeatures::to_json() const {
  return {{"registers", registers},       {"shared_bytes", shared_bytes},
          {"dynamic_shared", dynamic_shared}, {"tensor_cores", tensor_cores},
          {"vector_loads", vector_loads}, {"warp_shuffles", warp_shuffles},
          {"known_resources", known_resources}, {"cell", cell()}};
}

KernelFeatures KernelFeatures::from_json(const nlohmann::json& j) {
  // Features only place a kernel in the archive's grid: a field of another type reads as unknown.
  KernelFeatures f;
  f.registers = field_or(j, "registers", 0);
  f.shared_bytes = field_or(j, "shared_bytes", 0L);
  f.dynamic_shared = field_or(j, "dynamic_shared", false);
  f.tensor_cores = field_or(j, "tensor_cores", false);
  f.vector_loads = field_or(j, "vector_loads", false);
  f.warp_shuffles = field_or(j, "warp_shuffles", false);
  f.known_resources = field_or(j, "known_resources", false);
  return f;
}

}  // namespace kevo::evolve
