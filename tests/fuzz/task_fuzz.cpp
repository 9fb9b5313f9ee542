// Fuzzes task.toml parsing and, for a task that parses, everything evaluated from it per config:
// shapes, flops, bytes and workspace expressions.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "task/task.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto task = kevo::parse_task(text, "fuzz/task.toml");
  if (!task) return 0;
  for (const auto& c : task->configs) {
    for (const auto* list : {&task->inputs, &task->outputs})
      for (const auto& t : *list) (void)task->shape_of(t, c);
    (void)task->flops(c);
    (void)task->bytes(c);
    (void)task->workspace_bytes(c);
    (void)task->dim_values(c);
  }
  (void)task->main();
  (void)task->tolerance_for(task->precision());
  return 0;
}
