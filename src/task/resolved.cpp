#include "task/resolved.h"

#include <fmt/format.h>

#include <cstdint>

#include "task/limits.h"

namespace kevo {
namespace {

// A config that does not resolve is a mistake in the task's file (its expressions), whoever meets it.
template <class... A>
Unexpected bad_config(const Task& task, const Config& c, fmt::format_string<A...> f, A&&... a) {
  return fail(ErrorCode::kParse, "{}: config '{}': {}", task.name, c.name, fmt::format(f, std::forward<A>(a)...));
}

// Appends each spec's shape and sizes to `out` and adds its bytes to `total`; every product and sum
// is checked, so a shape too large for 64 bits is an error, never a wrapped size.
Status resolve_tensors(const Task& task, const Config& c, const std::vector<TensorSpec>& specs,
                       std::vector<ResolvedTensor>& out, uint64_t& total) {
  for (const TensorSpec& spec : specs) {
    auto shape = task.shape_of(spec, c);
    if (!shape) return shape.unexpected();
    auto n = shape_elements(*shape);
    if (!n) return bad_config(task, c, "tensor '{}': {}", spec.name, n.error().message);
    if (*n > static_cast<uint64_t>(INT64_MAX))
      return bad_config(task, c, "tensor '{}': the element count overflows a 64-bit integer", spec.name);
    uint64_t nbytes = 0;
    if (__builtin_mul_overflow(*n, static_cast<uint64_t>(dtype_size(spec.dtype)), &nbytes))
      return bad_config(task, c, "tensor '{}': its byte count overflows a 64-bit integer", spec.name);
    if (__builtin_add_overflow(total, nbytes, &total))
      return bad_config(task, c, "the byte count overflows a 64-bit integer at tensor '{}'", spec.name);
    out.push_back({&spec, std::move(*shape), static_cast<int64_t>(*n), nbytes});
  }
  return {};
}

// flops or bytes: absent where the task declares no model.
Result<std::optional<double>> model(const Task& task, const Config& c, const std::string& expr, const char* what) {
  if (expr.empty()) return std::optional<double>();
  auto v = eval_expr(expr, c.dims);
  if (!v) return bad_config(task, c, "{}: {}", what, v.error().message);
  return std::optional<double>(*v);
}

}  // namespace

Result<ResolvedConfig> Task::resolve(const Config& c) const {
  ResolvedConfig r;
  r.config = &c;
  for (const auto& d : dims) {
    auto it = c.dims.find(d);
    if (it == c.dims.end()) return bad_config(*this, c, "no value for dimension '{}'", d);
    r.dims.push_back(it->second);
  }
  KEVO_TRY(resolve_tensors(*this, c, inputs, r.inputs, r.input_bytes));
  KEVO_TRY(resolve_tensors(*this, c, outputs, r.outputs, r.output_bytes));
  if (uint64_t sum = 0; __builtin_add_overflow(r.input_bytes, r.output_bytes, &sum))
    return bad_config(*this, c, "the inputs and outputs together overflow a 64-bit byte count");
  auto fl = model(*this, c, flops_expr, "flops");
  if (!fl) return fl.unexpected();
  auto by = model(*this, c, bytes_expr, "bytes");
  if (!by) return by.unexpected();
  r.flops = *fl;
  r.bytes = *by;
  if (!workspace_expr.empty()) {  // empty, as "0": no workspace
    auto ws = eval_int_expr(workspace_expr, c.dims);
    if (!ws) return bad_config(*this, c, "workspace: {}", ws.error().message);
    if (*ws < 0) return bad_config(*this, c, "workspace: {} bytes is negative", *ws);
    r.workspace_bytes = static_cast<uint64_t>(*ws);
  }
  r.tolerance = tolerance_for(precision());
  return r;
}

uint64_t ResolvedConfig::input_numel() const {
  uint64_t n = 0;
  for (const auto& t : inputs) n += static_cast<uint64_t>(t.numel);
  return n;
}

const ResolvedTensor* ResolvedConfig::find(std::string_view name) const {
  for (const auto* list : {&inputs, &outputs})
    for (const auto& t : *list)
      if (t.name() == name) return &t;
  return nullptr;
}

}  // namespace kevo
