#include "task/limits.h"

namespace kevo {

Result<uint64_t> shape_elements(const std::vector<int64_t>& shape) {
  uint64_t n = 1;
  for (int64_t s : shape) {
    if (s < 0) return fail("negative extent {}", s);
    if (__builtin_mul_overflow(n, static_cast<uint64_t>(s), &n))
      return fail("the element count overflows a 64-bit integer");
  }
  return n;
}

Result<uint64_t> config_bytes(const Task& task, const Config& c) {
  auto r = task.resolve(c);
  if (!r) return r.unexpected();
  return r->data_bytes();
}

Status check_config_limits(const Task& task, const ResolvedConfig& r) {
  const Config& c = *r.config;
  for (const auto* list : {&r.inputs, &r.outputs})
    for (const auto& t : *list)
      if (static_cast<uint64_t>(t.numel) > kMaxTensorElements)
        return fail("{}: config '{}': tensor '{}' has {} elements, over the limit of {} per tensor", task.name,
                    c.name, t.name(), t.numel, kMaxTensorElements);
  const uint64_t total = r.data_bytes();
  if (total > kMaxConfigBytes)
    return fail("{}: config '{}': inputs and outputs take {} bytes ({:.1f} GiB), over the limit of {} "
                "bytes ({} GiB) per config",
                task.name, c.name, total, static_cast<double>(total) / (1ull << 30), kMaxConfigBytes,
                kMaxConfigBytes >> 30);
  return {};
}

Status check_config_limits(const Task& task, const Config& c) {
  auto r = task.resolve(c);
  if (!r) return r.unexpected();
  return check_config_limits(task, *r);
}

}  // namespace kevo
