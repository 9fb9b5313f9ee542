// `kevo recheck SOLUTIONS --claims TSV --problems DIR`: published KernelBench solutions and their
// claimed speedups, each checked by kevo against its problem imported as a task (docs/KERNELBENCH.md).
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "cli/commands.h"
#include "interop/recheck.h"
#include "util/fs.h"

namespace kevo::cli {
namespace fs = std::filesystem;

namespace {

struct RecheckArgs {
  std::string solutions, claims, problems, out = "recheck";
  bool fake_gpu = false;
  double timeout = 600;
};

void print_progress(size_t i, size_t n, const interop::RecheckRow& r, bool reused) {
  std::string claim = r.claimed ? fmt::format(", claimed {:.3g}x", *r.claimed) : "";
  std::string speed = r.verdict.vs_eager ? fmt::format(", {:.2f}x vs eager", r.verdict.vs_eager->median) : "";
  std::printf("[%zu/%zu] (%s) %s: %s%s%s: %s\n", i, n, reused ? "done before" : fmt::format("{:.1f} s", r.seconds).c_str(),
              r.file.c_str(), interop::to_string(r.verdict.outcome), speed.c_str(), claim.c_str(),
              r.verdict.reason.c_str());
  std::fflush(stdout);
}

int run_recheck(const RecheckArgs& a) {
  interop::RecheckOptions o;
  o.solutions = a.solutions;
  o.claims = a.claims;
  o.problems = a.problems;
  o.results = fs::path(a.out) / "results.tsv";
  o.tasks_dir = fs::path(a.out) / "tasks";
  o.bridge.request_timeout = std::chrono::milliseconds(static_cast<int64_t>(a.timeout * 1000));
  std::error_code ec;
  fs::create_directories(o.tasks_dir, ec);
  if (ec) {
    std::fprintf(stderr, "kevo recheck: %s: cannot create: %s\n", o.tasks_dir.c_str(), ec.message().c_str());
    return 21;
  }
  auto ev = a.fake_gpu ? interop::fake_solution_evaluator() : interop::needs_gpu_evaluator();
  if (a.fake_gpu)
    std::fprintf(stderr, "kevo recheck: --fake-gpu: verdicts come from '# kevo-fake:' markers; nothing is run\n");
  auto rows = interop::recheck(*ev, o, print_progress);
  if (!rows) {
    std::fprintf(stderr, "kevo recheck: %s\n", rows.error().message.c_str());
    return rows.error().code == ErrorCode::kNoTorch ? 20 : 21;
  }
  const std::string table = interop::recheck_table(*rows);
  if (auto s = write_file_atomic(fs::path(a.out) / "table.md", table); !s)
    std::fprintf(stderr, "kevo recheck: %s\n", s.error().message.c_str());
  std::printf("\n%s\nResults: %s (a rerun skips the solutions done); table: %s\n", table.c_str(), o.results.c_str(),
              (fs::path(a.out) / "table.md").c_str());
  return 0;
}

}  // namespace

void register_recheck(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<RecheckArgs>();
  auto* c = app.add_subcommand("recheck",
                               "Check published KernelBench solutions (ModelNew modules) and their claimed speedups: "
                               "one table of kevo's verdicts and speedups beside the claims.");
  c->add_option("solutions", a->solutions, "Folder of solution files (*.py defining ModelNew)")->required();
  c->add_option("--claims", a->claims, "TSV of claims: columns file, claimed_speedup[, problem_id, ...]")->required();
  c->add_option("--problems", a->problems, "Folder of the problem files (a KernelBench level)")->required();
  c->add_option("--out,-o", a->out, "Folder for results.tsv, table.md and the imported tasks")->capture_default_str();
  c->add_option("--timeout", a->timeout, "Seconds one bridge request may take")->capture_default_str();
  c->add_flag("--fake-gpu", a->fake_gpu, "Test only: verdicts from '# kevo-fake:' markers, nothing run")->group("");
  c->callback([a, &exit_code] { exit_code = run_recheck(*a); });
}

}  // namespace kevo::cli
