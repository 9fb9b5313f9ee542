// Retrieval over hand-made task features: the closest tasks' entries come first, one per task,
// and the rules hold (no failed held-out kernel, no entry of the same task's held-out config, no
// marker-evaluator entry for a GPU run).
#include <gtest/gtest.h>

#include <map>

#include "archive/retrieval.h"
#include "archive/source_diff.h"

namespace kevo::archive {
namespace {

using store::ArchiveRow;
using store::HeldOut;

TaskFeatures features(const std::string& op, std::vector<std::string> dtypes, const std::string& bound,
                      double elements, const std::string& shape) {
  return {op, std::move(dtypes), bound, {shape}, elements};
}

struct Fixture {
  std::vector<ArchiveRow> rows;
  std::map<int64_t, ArchiveRow> by_id;
  int64_t add(const std::string& task, const TaskFeatures& f, double speedup, const std::string& source = "",
              HeldOut held = HeldOut::kPassed, const std::string& config = "main (N=1)", bool fake = false) {
    ArchiveRow r;
    r.id = static_cast<int64_t>(rows.size()) + 1;
    r.task = task;
    r.gpu = "NVIDIA H100";
    r.config = config;
    r.features_json = f.to_json().dump();
    r.speedup = speedup;
    r.held_out = held;
    r.fake = fake;
    r.source = source;
    rows.push_back(r);
    by_id[r.id] = r;
    return r.id;
  }
  std::vector<std::string> tasks_for(const Query& q, size_t k) {
    ArchiveIndex index(rows);
    auto m = retrieve(index, q, k, [&](int64_t id) -> Result<ArchiveRow> { return by_id.at(id); });
    EXPECT_TRUE(m);
    std::vector<std::string> out;
    for (const auto& x : *m) out.push_back(x.entry.task);
    return out;
  }
};

Fixture library() {
  Fixture f;
  f.add("gelu", features("elementwise", {"f32"}, "memory", 2e6, "main: N=1048576"), 1.8);
  f.add("relu_f16", features("elementwise", {"f16"}, "memory", 2e6, "main: N=1048576"), 1.6);
  f.add("softmax", features("reduction", {"f32"}, "memory", 8e6, "main: B=4096, N=1024"), 2.5);
  f.add("row_sum", features("reduction", {"f32"}, "memory", 4e6, "main: B=4096, N=1024"), 1.4);
  f.add("matmul_bf16", features("matmul", {"bf16", "f32"}, "compute", 3e6, "main: M=1024, N=1024, K=1024"), 3.0);
  f.add("matmul_f32", features("matmul", {"f32"}, "compute", 3e6, "main: M=1024, N=1024, K=1024"), 2.0);
  return f;
}

TEST(Retrieval, PicksTheEntriesOfTheClosestTasks) {
  Fixture f = library();
  Query reduction{"layernorm", features("reduction", {"f32"}, "memory", 8e6, "main: B=4096, N=1024"), {}, "NVIDIA H100"};
  EXPECT_EQ(f.tasks_for(reduction, 2), (std::vector<std::string>{"softmax", "row_sum"}));
  Query gemm{"matmul_f16", features("matmul", {"f16", "f32"}, "compute", 3e6, "main: M=512, N=512, K=512"), {}, "NVIDIA H100"};
  EXPECT_EQ(f.tasks_for(gemm, 2), (std::vector<std::string>{"matmul_bf16", "matmul_f32"}));
  Query half{"silu_f16", features("elementwise", {"f16"}, "memory", 2e6, "main: N=1048576"), {}, "NVIDIA H100"};
  EXPECT_EQ(f.tasks_for(half, 1), (std::vector<std::string>{"relu_f16"}));
}

TEST(Retrieval, OneEntryPerTaskTheMostSimilarSourceFirst) {
  Fixture f;
  auto elem = features("elementwise", {"f32"}, "memory", 2e6, "main: N=1048576");
  f.add("gelu", elem, 1.5, "float4 vectorized load tanhf erf");
  const int64_t close = f.add("gelu", elem, 1.5, "__global__ void scale float x y blockIdx threadIdx");
  f.add("relu", elem, 1.2, "something else entirely");
  Query q{"scale2", elem, {}, "NVIDIA H100", false, "__global__ void scale(const float* x, float* y) blockIdx threadIdx"};
  ArchiveIndex index(f.rows);
  auto m = retrieve(index, q, 3, [&](int64_t id) -> Result<ArchiveRow> { return f.by_id.at(id); });
  ASSERT_TRUE(m);
  ASSERT_EQ(m->size(), 2u);  // gelu once, relu once
  EXPECT_EQ((*m)[0].entry.id, close);
  EXPECT_EQ((*m)[1].entry.task, "relu");
}

TEST(Retrieval, NeverAFailedHeldOutKernelTheTasksHeldOutConfigsOrAFakeEntry) {
  Fixture f;
  auto elem = features("elementwise", {"f32"}, "memory", 2e6, "main: N=1048576");
  f.add("gelu", elem, 9.0, "", HeldOut::kFailed);
  f.add("scale", elem, 5.0, "", HeldOut::kPassed, "secret_holdout (N=987653)");
  f.add("relu", elem, 4.0, "", HeldOut::kPassed, "main (N=1)", /*fake=*/true);
  f.add("scale", elem, 1.1, "", HeldOut::kNotChecked, "main (N=1048576)");
  f.add("sigmoid", elem, 1.2, "", HeldOut::kPassed);
  Query q{"scale", elem, {"secret_holdout"}, "NVIDIA H100"};
  EXPECT_EQ(f.tasks_for(q, 5), (std::vector<std::string>{"sigmoid", "scale"}));
  q.fake = true;
  EXPECT_EQ(f.tasks_for(q, 5), (std::vector<std::string>{"relu"}));
}

TEST(Retrieval, FeatureScoreRanksCloserTasksHigher) {
  auto a = features("reduction", {"f32"}, "memory", 1e6, "main: B=1, N=2");
  EXPECT_GT(feature_score(a, a), feature_score(a, features("reduction", {"f16"}, "memory", 1e6, "main: B=1, N=2")));
  EXPECT_GT(feature_score(a, features("reduction", {"f16"}, "memory", 1e6, "main: B=1, N=2")),
            feature_score(a, features("matmul", {"f16"}, "compute", 1e6, "main: M=1")));
  EXPECT_EQ(feature_score(TaskFeatures{}, TaskFeatures{}), 0);
  EXPECT_EQ(source_similarity("a b c", "a b c"), 1);
  EXPECT_EQ(source_similarity("a b", "c d"), 0);
}

TEST(SourceDiff, ShowsChangedLinesWithContext) {
  std::string d = source_diff("a\nb\nc\nd\ne\nf\ng\n", "a\nb\nc\nD\ne\nf\ng\n", 1);
  EXPECT_EQ(d, "@@ line 3 @@\n c\n-d\n+D\n e\n");
  EXPECT_EQ(source_diff("same\n", "same\n"), "");
}

}  // namespace
}  // namespace kevo::archive
