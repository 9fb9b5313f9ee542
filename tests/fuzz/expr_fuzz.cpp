// Fuzzes the dimension-expression evaluator (shapes, flops, bytes, init bounds in task.toml)
// directly, where the TOML harness reaches it only through valid task files.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "task/expr.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  // Values near the edges of int64 so that overflow in the evaluator is reached.
  static const kevo::DimValues dims = {{"N", 1000}, {"M", 7},
                                       {"K", int64_t{1} << 40}, {"B", INT64_MAX}, {"Z", 0}};
  (void)kevo::eval_expr(text, dims);
  (void)kevo::eval_int_expr(text, dims);
  (void)kevo::expr_names(text);
  return 0;
}
