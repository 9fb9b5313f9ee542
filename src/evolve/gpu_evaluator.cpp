// The real evaluator: the checker of src/check on this machine's GPU.
#include <memory>
#include <mutex>
#include <regex>

#include "check/compile_recipe.h"
#include "compile/pool.h"
#include "evolve/candidate_evaluator.h"
#include "run/warm_runners.h"

namespace kevo::evolve {

namespace {

class GpuEvaluator final : public CandidateEvaluator {
 public:
  // Runners are started ahead for the next two evaluations (each takes the candidate's and the
  // oracle's): a run evaluates many candidates of one task, and each would otherwise wait for its
  // two. Two spares were too few: a candidate rejected quickly left the next one waiting for
  // runners still starting.
  explicit GpuEvaluator(int threads) : pool_(threads) { WarmRunners::set_spares(4); }

  Verdict evaluate(const Task& task, const std::filesystem::path& source_file,
                   const EvalOptions& opts) override {
    EvalOptions o = opts;
    o.candidate = source_file;
    o.warm_runners = true;
    Verdict v = kevo::evaluate(task, o);
    learn_arch(v);
    return v;
  }

  Verdict evaluate_baseline(const Task& task, const EvalOptions& opts) override {
    EvalOptions o = opts;
    o.baseline_mode = true;
    o.warm_runners = true;
    Verdict v = kevo::evaluate(task, o);
    learn_arch(v);
    return v;
  }

  // The checker's own recipe (check/compile_recipe.h) for the device's architecture: the same
  // cache key, so the GPU step later finds the shared object ready. Until the
  // baseline has told us the architecture there is nothing safe to warm.
  void warm(const Task& task, const std::string& source) override {
    std::string arch;
    {
      std::lock_guard lock(mu_);
      arch = arch_;
    }
    if (arch.empty()) return;
    auto f = pool_.submit(source, "candidate.cu", candidate_compile_options(task, arch));
    (void)f.get();  // a failure shows up again, with its diagnostics, in evaluate()
  }

  void remember_arch(const std::string& arch) override {
    const std::string a = device_arch(arch);
    std::lock_guard lock(mu_);
    if (arch_.empty() && a.rfind("sm_", 0) == 0) arch_ = a;
  }

  std::string cuda_version() override {
    auto v = compiler_version("nvcc");
    if (!v) return {};
    std::smatch m;
    static const std::regex re(R"(release ([0-9]+\.[0-9]+))");
    if (std::regex_search(*v, m, re)) return "CUDA " + m[1].str();
    return {};
  }

 private:
  void learn_arch(const Verdict& v) {
    if (!v.compile || v.compile->arch_used.empty()) return;
    std::string a = v.compile->arch_used;
    // sm_90a is chosen per source (needs_sm90a); the device architecture is the plain one.
    if (a.size() > 1 && a.back() == 'a') a.pop_back();
    std::lock_guard lock(mu_);
    arch_ = a;
  }
  CompilePool pool_;
  std::mutex mu_;
  std::string arch_;
};

}  // namespace

std::unique_ptr<CandidateEvaluator> make_gpu_evaluator(int compile_threads) {
  return std::make_unique<GpuEvaluator>(compile_threads);
}

}  // namespace kevo::evolve
