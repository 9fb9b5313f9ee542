#include "interop/solution_evaluator.h"

#include <fmt/format.h>

#include <cstdlib>
#include <sstream>

#include "util/fs.h"

namespace kevo::interop {
namespace {

class NeedsGpu final : public SolutionEvaluator {
 public:
  std::string name() const override { return "none"; }
  SolutionVerdict evaluate(const Task&, const std::filesystem::path&) override {
    SolutionVerdict v;
    v.outcome = SolutionOutcome::kNeedsGpu;
    v.reason = "not evaluated: checking and timing a Python solution needs a GPU and kevo's Python candidate runtime";
    return v;
  }
};

std::optional<Speedup> parse_speedup(const std::string& s) {
  Speedup out;
  char* end = nullptr;
  out.median = std::strtod(s.c_str(), &end);
  out.low = out.high = out.median;
  if (end && *end == ':') out.low = std::strtod(end + 1, &end);
  if (end && *end == ':') out.high = std::strtod(end + 1, &end);
  if (!end || *end || out.median <= 0) return std::nullopt;
  return out;
}

// One key=value of the marker; false for a key or value it does not know.
bool apply(SolutionVerdict& v, const std::string& key, const std::string& value) {
  if (key == "outcome") {
    auto o = parse_solution_outcome(value);
    if (o) v.outcome = *o;
    return o.has_value();
  }
  if (key == "eager" || key == "compile") {
    auto s = parse_speedup(value);
    (key == "eager" ? v.vs_eager : v.vs_compile) = s;
    return s.has_value();
  }
  if (key == "allclose") {
    auto c = parse_loose_check(value);
    if (c) v.kernelbench_allclose = *c;
    return c.has_value();
  }
  if (key == "reason") {
    v.reason = value;
    return true;
  }
  return false;
}

class Fake final : public SolutionEvaluator {
 public:
  std::string name() const override { return "fake"; }
  SolutionVerdict evaluate(const Task&, const std::filesystem::path& solution) override {
    SolutionVerdict v{SolutionOutcome::kPass, "fake: passes (no marker)", Speedup{1, 1, 1}, Speedup{1, 1, 1},
                      LooseCheck::kPass};
    auto text = read_file(solution);
    if (!text) return {SolutionOutcome::kInfraError, text.error().message, {}, {}, LooseCheck::kUnknown};
    std::istringstream lines(*text);
    for (std::string line; std::getline(lines, line);) {
      const std::string mark = "# kevo-fake:";
      if (line.rfind(mark, 0) != 0) continue;
      v.reason = "fake";
      std::istringstream words(line.substr(mark.size()));
      for (std::string w; words >> w;) {
        const size_t eq = w.find('=');
        if (eq == std::string::npos || !apply(v, w.substr(0, eq), w.substr(eq + 1)))
          return {SolutionOutcome::kInfraError, fmt::format("{}: bad kevo-fake marker entry '{}'", solution.string(), w),
                  {}, {}, LooseCheck::kUnknown};
      }
      break;
    }
    return v;
  }
};

}  // namespace

std::unique_ptr<SolutionEvaluator> needs_gpu_evaluator() { return std::make_unique<NeedsGpu>(); }
std::unique_ptr<SolutionEvaluator> fake_solution_evaluator() { return std::make_unique<Fake>(); }

}  // namespace kevo::interop
