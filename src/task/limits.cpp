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

namespace {

// Calls fn(tensor, elements, bytes) for each input and output; stops at the first error.
template <class F>
Status for_each_tensor(const Task& task, const Config& c, F&& fn) {
  for (const auto* list : {&task.inputs, &task.outputs})
    for (const auto& t : *list) {
      auto shape = task.shape_of(t, c);
      if (!shape) return shape.unexpected();
      auto n = shape_elements(*shape);
      if (!n) return fail("{}: config '{}': tensor '{}': {}", task.name, c.name, t.name, n.error().message);
      uint64_t bytes = 0;
      if (__builtin_mul_overflow(*n, static_cast<uint64_t>(dtype_size(t.dtype)), &bytes))
        return fail("{}: config '{}': tensor '{}': its byte count overflows a 64-bit integer", task.name,
                    c.name, t.name);
      KEVO_TRY(fn(t, *n, bytes));
    }
  return {};
}

}  // namespace

Result<uint64_t> config_bytes(const Task& task, const Config& c) {
  uint64_t total = 0;
  KEVO_TRY(for_each_tensor(task, c, [&](const TensorSpec& t, uint64_t, uint64_t bytes) -> Status {
    if (__builtin_add_overflow(total, bytes, &total))
      return fail("{}: config '{}': the byte count overflows a 64-bit integer at tensor '{}'", task.name,
                  c.name, t.name);
    return {};
  }));
  return total;
}

Status check_config_limits(const Task& task, const Config& c) {
  KEVO_TRY(for_each_tensor(task, c, [&](const TensorSpec& t, uint64_t n, uint64_t) -> Status {
    if (n > kMaxTensorElements)
      return fail("{}: config '{}': tensor '{}' has {} elements, over the limit of {} per tensor",
                  task.name, c.name, t.name, n, kMaxTensorElements);
    return {};
  }));
  auto total = config_bytes(task, c);
  if (!total) return total.unexpected();
  if (*total > kMaxConfigBytes)
    return fail("{}: config '{}': inputs and outputs take {} bytes ({:.1f} GiB), over the limit of {} "
                "bytes ({} GiB) per config",
                task.name, c.name, *total, static_cast<double>(*total) / (1ull << 30), kMaxConfigBytes,
                kMaxConfigBytes >> 30);
  return {};
}

}  // namespace kevo
