#include "kernel_manifest.h"

#include <algorithm>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "check/verdict_json.h"
#include "util/fs.h"

namespace kevo::gpu_suite {

std::string KernelCase::reason_text() const { return reason ? kevo::reason_text(*reason, static_rule) : ""; }

bool KernelCase::accepts(std::string_view verdict_reason) const {
  const std::optional<Reason> got = parse_reason(std::string(verdict_reason));
  if (!got) return false;
  if (got == reason) return static_rule.empty() || static_rule_of(std::string(verdict_reason)) == static_rule;
  return std::find(also.begin(), also.end(), *got) != also.end();
}

namespace {

// One [[kernel]] table as a case; the problems with it go to `errors`.
std::optional<KernelCase> read_case(const toml::table& k, size_t index, std::string& errors) {
  KernelCase c;
  c.file = k["file"].value_or(std::string());
  c.task = k["task"].value_or(std::string());
  c.no_static = k["no_static"].value_or(false);
  c.max_speedup = k["max_speedup"].value_or(0.0);
  const std::string expect = k["expect"].value_or(std::string()), reason = k["reason"].value_or(std::string());
  const std::string where = fmt::format("kernel {} ('{}')", index + 1, c.file);
  const size_t errors_before = errors.size();
  if (c.file.empty() || c.task.empty()) errors += fmt::format("\n  {}: needs a file and a task", where);
  if (auto o = parse_outcome(expect)) c.expect = *o;
  else errors += fmt::format("\n  {}: unknown outcome '{}' (expect: pass, compile_error, incorrect, ...)", where, expect);
  if (!reason.empty()) {
    if (auto r = parse_reason(reason)) c.reason = *r, c.static_rule = static_rule_of(reason);
    else errors += fmt::format("\n  {}: unknown reason '{}' (check/reason.h lists the codes)", where, reason);
  } else if (c.expect != Outcome::Pass) {
    errors += fmt::format("\n  {}: expects '{}' without a reason (name the one it must be rejected for)", where, expect);
  }
  if (const toml::array* also = k["also"].as_array())
    for (const auto& a : *also) {
      const std::string text = a.value_or(std::string());
      if (auto r = parse_reason(text)) c.also.push_back(*r);
      else errors += fmt::format("\n  {}: unknown reason '{}' in also", where, text);
    }
  if (errors.size() != errors_before) return std::nullopt;
  return c;
}

}  // namespace

Result<std::vector<KernelCase>> parse_kernel_manifest(std::string_view toml_text, std::string_view source) {
  toml::table t;
  try {
    t = toml::parse(toml_text, source);
  } catch (const toml::parse_error& e) {
    return fail("{}: {}", source, e.description());
  }
  const toml::array* kernels = t["kernel"].as_array();
  if (!kernels || kernels->empty()) return fail("{}: no [[kernel]] entries", source);
  std::vector<KernelCase> out;
  std::string errors;
  for (size_t i = 0; i < kernels->size(); ++i) {
    const toml::table* k = (*kernels)[i].as_table();
    if (!k) {
      errors += fmt::format("\n  kernel {}: not a table", i + 1);
      continue;
    }
    if (auto c = read_case(*k, i, errors)) out.push_back(std::move(*c));
  }
  if (!errors.empty()) return fail("{}:{}", source, errors);
  return out;
}

Result<std::vector<KernelCase>> load_kernel_manifest(const std::filesystem::path& file) {
  auto text = read_file(file);
  if (!text) return text.unexpected();
  return parse_kernel_manifest(*text, file.string());
}

}  // namespace kevo::gpu_suite
