#include "task/backward.h"

#include <algorithm>
#include <cmath>

namespace kevo {

namespace fs = std::filesystem;

fs::path forward_dir(const Task& backward) {
  return backward.dir.parent_path() / (backward.backward ? backward.backward->of : std::string());
}

double reduction_atol(double terms) {
  return kReductionMargin * kF32Roundoff * std::sqrt(std::max(1.0, terms));
}

namespace {

const TensorSpec* find_tensor(const std::vector<TensorSpec>& list, const std::string& name) {
  auto it =
      std::find_if(list.begin(), list.end(), [&](const TensorSpec& t) { return t.name == name; });
  return it == list.end() ? nullptr : &*it;
}

bool same_init(const InitSpec& a, const InitSpec& b) {
  return a.dist == b.dist && a.a == b.a && a.b == b.b && a.low_expr == b.low_expr &&
         a.high_expr == b.high_expr && a.wide == b.wide && a.min == b.min;
}

// `mine` (of the backward task) against `theirs` (of the forward) on one config.
Status same_tensor(const Task& bwd, const Task& fwd, const Config& c, const TensorSpec& mine,
                   const TensorSpec& theirs, std::string_view role) {
  const std::string where =
      fmt::format("{}: {} '{}' (the forward's '{}' in {})", (bwd.dir / "task.toml").string(), role,
                  mine.name, theirs.name, (fwd.dir / "task.toml").string());
  if (mine.dtype != theirs.dtype)
    return fail("{}: dtype {} differs from the forward's {}", where, dtype_name(mine.dtype),
                dtype_name(theirs.dtype));
  auto a = bwd.shape_of(mine, c), b = fwd.shape_of(theirs, c);
  if (!a) return fail("{}: {}", where, a.error().message);
  if (!b) return fail("{}: {}", where, b.error().message);
  if (*a != *b)
    return fail("{}: config '{}': shape [{}] differs from the forward's [{}]", where, c.name,
                fmt::join(*a, ", "), fmt::join(*b, ", "));
  return {};
}

}  // namespace

Status check_backward_pair(const Task& bwd, const Task& fwd) {
  const std::string file = (bwd.dir / "task.toml").string();
  if (!bwd.backward) return fail("{}: not a backward task (no [backward] table)", file);
  const BackwardSpec& b = *bwd.backward;
  if (fwd.backward)
    return fail("{}: backward.of = \"{}\" names another backward task; it must name a forward one",
                file, b.of);
  for (const auto& d : fwd.dims)
    if (std::find(bwd.dims.begin(), bwd.dims.end(), d) == bwd.dims.end())
      return fail("{}: dims: the forward task '{}' has dimension '{}'; declare it here too", file,
                  fwd.name, d);
  for (const auto& c : bwd.configs) {
    for (const auto& name : b.saved) {
      const TensorSpec* theirs = find_tensor(fwd.inputs, name);
      if (!theirs)
        return fail("{}: backward.saved: '{}' is not an input of the forward task '{}'", file, name,
                    fwd.name);
      const TensorSpec& mine = *find_tensor(bwd.inputs, name);
      KEVO_TRY(same_tensor(bwd, fwd, c, mine, *theirs, "saved input"));
      if (!same_init(mine.init, theirs->init) || mine.role != theirs->role)
        return fail(
            "{}: saved input '{}': its role and init must be the forward's (it must draw "
            "the same values as the forward's input)",
            file, name);
    }
    for (const auto* m : {&b.saved_outputs, &b.grad_outputs}) {
      const bool grad = m == &b.grad_outputs;
      for (const auto& [in, out] : *m) {
        const TensorSpec* theirs = find_tensor(fwd.outputs, out);
        if (!theirs)
          return fail("{}: backward.{}.{}: '{}' is not an output of the forward task '{}'", file,
                      grad ? "grad_outputs" : "saved_outputs", in, out, fwd.name);
        KEVO_TRY(same_tensor(bwd, fwd, c, *find_tensor(bwd.inputs, in), *theirs,
                             grad ? "incoming gradient" : "saved output"));
      }
    }
    for (const auto& g : b.gradients) {
      const TensorSpec* theirs = find_tensor(fwd.inputs, g.of);
      if (!theirs)
        return fail("{}: backward.gradients({}).of: '{}' is not an input of the forward task '{}'",
                    file, g.output, g.of, fwd.name);
      if (!is_float(theirs->dtype))
        return fail(
            "{}: backward.gradients({}).of: the forward's '{}' is {}, which has no gradient", file,
            g.output, g.of, dtype_name(theirs->dtype));
      KEVO_TRY(same_tensor(bwd, fwd, c, *find_tensor(bwd.outputs, g.output), *theirs, "gradient"));
    }
  }
  return {};
}

}  // namespace kevo
