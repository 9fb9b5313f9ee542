#include "compile/ptxas.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <regex>

namespace kevo {

std::string demangle(const std::string& name) {
  if (name.rfind("_Z", 0) != 0) return name;
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> out(
      abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), &std::free);
  return status == 0 && out ? std::string(out.get()) : name;
}

std::vector<KernelResources> parse_ptxas(std::string_view log) {
  static const std::regex entry_re(R"(ptxas info\s*: Compiling entry function '([^']+)' for '([^']+)')");
  static const std::regex props_re(R"(ptxas info\s*: Function properties for (\S+))");
  static const std::regex frame_re(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used_re(R"(ptxas info\s*: Used (\d+) registers(.*))");
  static const std::regex barriers_re(R"(used (\d+) barriers)");
  static const std::regex smem_re(R"((\d+) bytes smem)");
  static const std::regex cmem_re(R"((\d+) bytes cmem\[\d+\])");
  static const std::regex cumulative_re(R"((\d+) bytes cumulative stack size)");

  std::vector<KernelResources> out;
  // Index into `out` of the entry function being compiled, and whether the last "Function
  // properties" header named it (properties of non-entry device functions are skipped).
  long current = -1;
  bool props_for_current = false;
  size_t pos = 0;
  while (pos <= log.size()) {
    size_t nl = log.find('\n', pos);
    if (nl == std::string_view::npos) nl = log.size();
    std::string line(log.substr(pos, nl - pos));
    pos = nl + 1;
    std::smatch m;
    if (std::regex_search(line, m, entry_re)) {
      KernelResources k;
      k.mangled = m[1];
      k.function = demangle(k.mangled);
      k.arch = m[2];
      out.push_back(std::move(k));
      current = static_cast<long>(out.size()) - 1;
      props_for_current = false;
    } else if (std::regex_search(line, m, props_re)) {
      props_for_current = current >= 0 && m[1] == out[current].mangled;
    } else if (std::regex_search(line, m, frame_re)) {
      if (props_for_current) {
        auto& k = out[current];
        k.stack_bytes = std::max(k.stack_bytes, std::stol(m[1]));
        k.spill_store_bytes = std::stol(m[2]);
        k.spill_load_bytes = std::stol(m[3]);
      }
      props_for_current = false;
    } else if (std::regex_search(line, m, used_re)) {
      if (current < 0) continue;
      auto& k = out[current];
      k.registers = std::stoi(m[1]);
      std::string rest = m[2];
      std::smatch r;
      if (std::regex_search(rest, r, barriers_re)) k.barriers = std::stoi(r[1]);
      if (std::regex_search(rest, r, smem_re)) k.shared_bytes = std::stol(r[1]);
      if (std::regex_search(rest, r, cumulative_re))
        k.stack_bytes = std::max(k.stack_bytes, std::stol(r[1]));
      long cmem = 0;
      for (std::sregex_iterator it(rest.begin(), rest.end(), cmem_re), end; it != end; ++it)
        cmem += std::stol((*it)[1]);
      k.const_bytes = cmem;
    }
  }
  return out;
}

}  // namespace kevo
