// Selection and population rules: rank selection, MAP-Elites cells, island migration, the
// noise-aware best, and the kernel features the cells are made of.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "evolve/features.h"
#include "evolve/noise.h"
#include "evolve/population.h"
#include "evolve/strategy.h"

namespace kevo::evolve {
namespace {

Member m(int64_t id, double speed, double rel_noise = 0.01, int island = 0, std::string cell = "c") {
  return Member{id, {speed, speed * (1 - rel_noise), speed * (1 + rel_noise)}, island, 1, std::move(cell)};
}

TEST(RankSelection, ProbabilitiesFollowOneOverRankPlusN) {
  auto p = rank_probabilities(5);
  ASSERT_EQ(p.size(), 5u);
  double z = 1.0 / 6 + 1.0 / 7 + 1.0 / 8 + 1.0 / 9 + 1.0 / 10;
  for (int r = 1; r <= 5; ++r) EXPECT_NEAR(p[r - 1], (1.0 / (r + 5)) / z, 1e-12) << "rank " << r;
  for (size_t i = 1; i < p.size(); ++i) EXPECT_GT(p[i - 1], p[i]);  // the fastest is likeliest
}

TEST(RankSelection, DrawsMatchTheProbabilities) {
  Population pop({.kind = PolicyKind::kElite, .size = 5});
  for (int i = 1; i <= 5; ++i) pop.offer(m(i, 1.0 + i * 0.1));  // id 5 fastest
  std::mt19937_64 rng(1);
  std::map<int64_t, int> count;
  const int n = 60000;
  for (int i = 0; i < n; ++i) count[pop.select(1, 0, rng).at(0).id]++;
  auto p = rank_probabilities(5);
  for (int rank = 0; rank < 5; ++rank) {
    int64_t id = 5 - rank;
    EXPECT_NEAR(count[id] / double(n), p[static_cast<size_t>(rank)], 0.01) << "id " << id;
  }
}

TEST(RankSelection, TwoParentsAreDistinct) {
  Population pop({.kind = PolicyKind::kElite, .size = 5});
  for (int i = 1; i <= 3; ++i) pop.offer(m(i, 1.0 + i));
  std::mt19937_64 rng(2);
  for (int i = 0; i < 100; ++i) {
    auto two = pop.select(2, 0, rng);
    ASSERT_EQ(two.size(), 2u);
    EXPECT_NE(two[0].id, two[1].id);
  }
}

TEST(ElitePolicy, KeepsTheKFastest) {
  Population pop({.kind = PolicyKind::kElite, .size = 3});
  for (int i = 1; i <= 6; ++i) pop.offer(m(i, i % 2 ? 1.0 + i : 0.5 + i * 0.01));
  auto ms = pop.members();
  ASSERT_EQ(ms.size(), 3u);
  EXPECT_EQ(ms[0].id, 5);
  EXPECT_EQ(ms[1].id, 3);
  EXPECT_EQ(ms[2].id, 1);
}

TEST(NoiseAware, ReplacesTheBestOnlyWithConfidence) {
  Population pop({.kind = PolicyKind::kElite, .size = 5});
  EXPECT_TRUE(pop.offer(m(1, 1.50, 0.02)));  // first valid: the best
  // Faster by point estimate, but the intervals overlap: not a new best (it still joins the elite).
  EXPECT_FALSE(pop.offer(m(2, 1.52, 0.02)));
  EXPECT_EQ(pop.best()->id, 1);
  EXPECT_EQ(pop.members().front().id, 2);
  // Clearly faster: lower bound above the best's upper bound.
  EXPECT_TRUE(pop.offer(m(3, 1.70, 0.02)));
  EXPECT_EQ(pop.best()->id, 3);
  // Without intervals a 3% margin is required.
  EXPECT_FALSE(confidently_faster({1.02, 0, 0}, {1.0, 0, 0}));
  EXPECT_TRUE(confidently_faster({1.05, 0, 0}, {1.0, 0, 0}));
  EXPECT_FALSE(confidently_faster({1.2, 1.0, 1.4}, {1.1, 1.05, 1.15}));
  EXPECT_TRUE(confidently_faster({1.3, 1.2, 1.4}, {1.1, 1.05, 1.15}));
}

TEST(SingleBest, HoldsOnlyTheConfidentBest) {
  Population pop({.kind = PolicyKind::kSingleBest, .size = 5});
  pop.offer(m(1, 1.5, 0.02));
  pop.offer(m(2, 1.51, 0.02));  // overlap: stays with 1
  ASSERT_EQ(pop.members().size(), 1u);
  EXPECT_EQ(pop.members()[0].id, 1);
  pop.offer(m(3, 2.0, 0.02));
  ASSERT_EQ(pop.members().size(), 1u);
  EXPECT_EQ(pop.members()[0].id, 3);
}

TEST(MapElites, OneEliteperCellFasterReplaces) {
  Population pop({.kind = PolicyKind::kMapElites, .size = 5});
  pop.offer(m(1, 1.2, 0.01, 0, "r1-s0-tc0-v0-w0"));
  pop.offer(m(2, 1.1, 0.01, 0, "r1-s0-tc0-v0-w0"));  // slower, same cell: rejected
  EXPECT_EQ(pop.cells().at("r1-s0-tc0-v0-w0").id, 1);
  pop.offer(m(3, 1.3, 0.01, 0, "r1-s0-tc0-v0-w0"));  // faster: replaces
  EXPECT_EQ(pop.cells().at("r1-s0-tc0-v0-w0").id, 3);
  pop.offer(m(4, 0.9, 0.01, 0, "r2-s1-tc0-v1-w1"));  // slow but a new niche: kept
  EXPECT_EQ(pop.cells().size(), 2u);
  EXPECT_EQ(pop.cells().at("r2-s1-tc0-v1-w1").id, 4);
  EXPECT_EQ(pop.size(), 2u);
  // Parents come from every occupied cell.
  std::mt19937_64 rng(3);
  std::map<int64_t, int> seen;
  for (int i = 0; i < 400; ++i) seen[pop.select(1, 0, rng)[0].id]++;
  EXPECT_GT(seen[3], 100);
  EXPECT_GT(seen[4], 100);
}

TEST(Islands, MigrationCopiesEachIslandsBestToTheNext) {
  Population pop({.kind = PolicyKind::kIslands, .size = 3, .islands = 3, .migration_interval = 4});
  pop.offer(m(1, 2.0, 0.01, 0));
  pop.offer(m(2, 1.5, 0.01, 1));
  pop.offer(m(3, 1.2, 0.01, 2));
  EXPECT_EQ(pop.members(1).size(), 1u);
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(pop.note_completed().migrated);
  EXPECT_TRUE(pop.note_completed().migrated);  // the 4th completed candidate: migration
  auto i1 = pop.members(1);
  ASSERT_EQ(i1.size(), 2u);
  EXPECT_EQ(i1[0].id, 1);  // island 0's best moved into island 1 (ring)
  auto i0 = pop.members(0);
  ASSERT_EQ(i0.size(), 2u);
  EXPECT_EQ(i0[1].id, 3);  // island 2's best moved into island 0
  EXPECT_EQ(pop.members(2)[0].id, 2);
  // Parents for an island come from that island only.
  std::mt19937_64 rng(4);
  for (int i = 0; i < 50; ++i) {
    auto p = pop.select(1, 2, rng);
    EXPECT_TRUE(p[0].id == 2 || p[0].id == 3);
  }
  // A full island drops its worst for a migrant.
  Population small({.kind = PolicyKind::kIslands, .size = 1, .islands = 2, .migration_interval = 1});
  small.offer(m(10, 3.0, 0.01, 0));
  small.offer(m(11, 1.0, 0.01, 1));
  small.note_completed();
  ASSERT_EQ(small.members(1).size(), 1u);
  EXPECT_EQ(small.members(1)[0].id, 10);
}

TEST(Islands, ResetEmptiesTheWorseHalfAndSeedsItFromTheBetter) {
  // Four islands, no migration, reset every 3 completed candidates.
  Population pop({.kind = PolicyKind::kIslands, .size = 3, .islands = 4, .migration_interval = 0,
                  .reset_interval = 3});
  pop.offer(m(1, 1.1, 0.01, 0));
  pop.offer(m(2, 3.0, 0.01, 1));
  pop.offer(m(3, 0.9, 0.01, 2));
  pop.offer(m(4, 2.0, 0.01, 3));
  pop.offer(m(5, 1.0, 0.01, 0));
  EXPECT_TRUE(pop.note_completed().reset.empty());
  EXPECT_TRUE(pop.note_completed().reset.empty());
  Completion c = pop.note_completed();
  EXPECT_FALSE(c.migrated);
  // Ranked by best: island 1 (3.0), 3 (2.0), 0 (1.1), 2 (0.9). Islands 0 and 2 are reset: the
  // worst-but-one (0) from the best survivor (1), the worst (2) from the next (3).
  EXPECT_EQ(c.reset, (std::vector<int>{0, 2}));
  ASSERT_EQ(pop.members(0).size(), 1u);
  EXPECT_EQ(pop.members(0)[0].id, 2);
  EXPECT_EQ(pop.members(0)[0].island, 0);
  ASSERT_EQ(pop.members(2).size(), 1u);
  EXPECT_EQ(pop.members(2)[0].id, 4);
  EXPECT_EQ(pop.members(1).size(), 1u);  // survivors unchanged
  EXPECT_EQ(pop.best()->id, 2);          // the run's best is not touched by a reset
  // An empty population resets nothing; a policy without islands never resets.
  Population empty({.kind = PolicyKind::kIslands, .islands = 4, .reset_interval = 1});
  EXPECT_TRUE(empty.note_completed().reset.empty());
  Population elite({.kind = PolicyKind::kElite, .reset_interval = 1});
  elite.offer(m(1, 1.0, 0.01, 0));
  EXPECT_TRUE(elite.note_completed().reset.empty());
}

TEST(Islands, FunsearchPresetResets) {
  auto s = preset("funsearch");
  ASSERT_TRUE(s);
  EXPECT_GT(s->population.reset_interval, 0);
  auto back = StrategyConfig::from_json(s->to_json());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->population.reset_interval, s->population.reset_interval);
  auto t = parse_strategy_toml("[evolve]\nstrategy = \"funsearch\"\nreset_interval = 7\n", StrategyConfig{});
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->population.reset_interval, 7);
}

TEST(Features, FromPtxasReportAndSource) {
  KernelResources k;
  k.registers = 72;
  k.shared_bytes = 20000;
  std::string src =
      "// float4 in a comment does not count\n"
      "#include <mma.h>\n"
      "__global__ void k(const float4* x) {\n"
      "  using namespace nvcuda; wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;\n"
      "  float v = __shfl_down_sync(0xffffffff, 1.f, 16);\n"
      "}\n";
  auto f = extract_features(src, {k}, true);
  EXPECT_EQ(f.registers, 72);
  EXPECT_TRUE(f.tensor_cores);
  EXPECT_TRUE(f.vector_loads);
  EXPECT_TRUE(f.warp_shuffles);
  EXPECT_EQ(f.cell(), "r2-s2-tc1-v1-w1");
  auto plain = extract_features("// float4 __shfl_down_sync wmma::\n__global__ void k(float* x) {}\n", {}, false);
  EXPECT_FALSE(plain.vector_loads);
  EXPECT_FALSE(plain.warp_shuffles);
  EXPECT_FALSE(plain.tensor_cores);
  EXPECT_EQ(plain.cell(), "r0-s0-tc0-v0-w0");
  auto dyn = extract_features("extern __shared__ float sh[];", {}, false);
  EXPECT_EQ(dyn.cell(), "r0-s1-tc0-v0-w0");
  EXPECT_EQ(KernelFeatures::from_json(f.to_json()).cell(), f.cell());
}

}  // namespace
}  // namespace kevo::evolve
