// Throughput figures: the evaluators' occupancy and NVML's GPU utilization, apart, in
// the status line, the outcome (whole run and search alone), `kevo evolve`'s summary and its
// "finished" event; NVML's figure is "n/a" (null in JSON) where it is not known, never 0%.
#include <fstream>

#include "harness.h"
#include "util/subprocess.h"

using namespace kevo;
using namespace kevo::evolve;
using namespace kevo::evolve::testing;
namespace fs = std::filesystem;

namespace {

// A GPU that always shows the same utilization.
class SteadyGpu final : public GpuUtilSource {
 public:
  explicit SteadyGpu(double pct) : pct_(pct) {}
  Result<double> read_percent() override { return pct_; }

 private:
  double pct_;
};

TEST(Throughput, TheStatusLineShowsBothBusyFiguresApart) {
  Progress p;
  p.run_id = 3, p.done = 5, p.budget = 20, p.gpu_busy = 0.861;
  EXPECT_TRUE(contains(p.status_line(), "evaluators busy 86%  GPU util n/a  0 in flight")) << p.status_line();
  p.gpu_util = 0.19;
  EXPECT_TRUE(contains(p.status_line(), "evaluators busy 86%  GPU util 19% (NVML)  0 in flight")) << p.status_line();
  p.gpu_util = 0.0;  // a known idle GPU is 0%, unlike an unknown one
  EXPECT_TRUE(contains(p.status_line(), "GPU util 0% (NVML)")) << p.status_line();
}

TEST(Throughput, TheEngineReportsNvmlsFigureForTheRunAndTheSearch) {
  Harness h(improving_kernels());
  GpuUtilSampler sampler(std::make_unique<SteadyGpu>(40), std::chrono::milliseconds(1));
  h.gpu_util = &sampler;
  std::vector<Progress> seen;
  h.progress = [&](const Progress& q) { seen.push_back(q); };
  auto out = h.run(h.options("evoengineer-full", 4));
  ASSERT_TRUE(out) << out.error().message;
  ASSERT_TRUE(out->gpu_util_nvml.has_value());
  EXPECT_NEAR(*out->gpu_util_nvml, 0.4, 1e-9);  // a mean of samples: not bit-exact
  EXPECT_EQ(out->search_candidates, 4);
  EXPECT_GE(out->search_gpu_busy, 0.0);
  EXPECT_LE(out->search_gpu_busy, 1.0);
  // The search is short; a window with no sample would be n/a, never 0%.
  if (out->search_gpu_util_nvml) {
    EXPECT_NEAR(*out->search_gpu_util_nvml, 0.4, 1e-9);
  }
  EXPECT_TRUE(std::any_of(seen.begin(), seen.end(), [](const Progress& q) {
    return q.gpu_util && contains(q.status_line(), "GPU util 40% (NVML)");
  }));
}

TEST(Throughput, WithoutASamplerNvmlsFigureIsNotKnown) {
  Harness h(improving_kernels());
  auto out = h.run(h.options("evoengineer-full", 3));
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_FALSE(out->gpu_util_nvml.has_value());
  EXPECT_FALSE(out->search_gpu_util_nvml.has_value());
  EXPECT_EQ(out->search_candidates, 3);
}

// `kevo evolve` end to end (marker evaluator, loopback model): the status lines (one per
// candidate, stderr not a terminal), the summary and the "finished" event carry both figures.
TEST(Throughput, EvolveShowsAndRecordsBothFigures) {
  Harness h(improving_kernels());
  const fs::path kevo = fs::path(KEVO_BINARY_DIR) / "bin" / "kevo";
  const fs::path events = h.dir / "events.jsonl";
  auto r = run_process({.argv = {kevo.string(), "evolve", h.task.dir.string(), "--fake-gpu", "--db",
                                 (h.dir / "cli.db").string(), "--model", h.server.base_url() + "#m1", "--strategy",
                                 "evoengineer-full", "--budget-candidates", "4", "--parallel", "2", "--events",
                                 "jsonl", events.string()},
                        .env_add = {{"HOME", h.dir.string()}, {"KEVO_DB", ""}},
                        .timeout = std::chrono::seconds(120)});
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->exit_code, 0) << r->err;
  EXPECT_TRUE(contains(r->err, "evaluators busy ")) << r->err;
  EXPECT_TRUE(contains(r->err, "%  GPU util n/a  ")) << r->err;
  EXPECT_TRUE(contains(r->out, "GPU util n/a")) << r->out;
  EXPECT_TRUE(contains(r->out, "(4 candidates, ")) << r->out;
  std::ifstream in(events);
  nlohmann::json fin;
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_object() && j.value("kind", "") == "finished") fin = j;
  }
  ASSERT_TRUE(fin.is_object()) << "no finished event in " << events;
  EXPECT_TRUE(fin["gpu_busy"].is_number());                // kept for readers of earlier runs
  EXPECT_TRUE(fin.contains("gpu_util_nvml") && fin["gpu_util_nvml"].is_null());
  EXPECT_TRUE(fin.contains("search_gpu_util_nvml") && fin["search_gpu_util_nvml"].is_null());
  EXPECT_EQ(fin["search_candidates"], 4);
  EXPECT_TRUE(fin["search_s"].is_number());
  EXPECT_GE(fin["search_evaluators_busy"].get<double>(), 0.0);
  EXPECT_LE(fin["search_evaluators_busy"].get<double>(), 1.0);
}

}  // namespace
