#include "runner/slab.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <vector>

namespace kevo::runner {
namespace {

TEST(Slab, PlacesAlignedRangesThatDoNotOverlap) {
  Slab s(1 << 20, 256);
  auto a = s.take(100), b = s.take(1000), c = s.take(256);
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(*a % 256, 0u);
  EXPECT_EQ(*b % 256, 0u);
  EXPECT_GE(*b, *a + 100);
  EXPECT_GE(*c, *b + 1000);
  EXPECT_EQ(s.taken(), 3u);
}

TEST(Slab, ANewRangeTakenBeforeTheOldIsGivenBackMovesAndTheCursorWalksOn) {
  Slab s(1 << 20, 256);
  auto old = s.take(4096);
  ASSERT_TRUE(old);
  std::set<uint64_t> seen{*old};
  for (int i = 0; i < 20; ++i) {  // the "moved" placement: the new one first, then the old given back
    auto fresh = s.take(4096, 4096);
    ASSERT_TRUE(fresh);
    EXPECT_NE(*fresh, *old);
    EXPECT_TRUE(seen.insert(*fresh).second) << "placement " << i << " repeated offset " << *fresh;
    EXPECT_TRUE(s.give(*old));
    old = fresh;
  }
}

TEST(Slab, WrapsToTheStartAndMergesWhatIsGivenBack) {
  Slab s(8192, 256);
  auto a = s.take(4096), b = s.take(4096);
  ASSERT_TRUE(a && b);
  EXPECT_FALSE(s.take(1));  // full
  EXPECT_TRUE(s.give(*a));
  EXPECT_TRUE(s.give(*b));
  EXPECT_EQ(s.free_bytes(), 8192u);
  auto whole = s.take(8192);  // only possible once the two free ranges are one again
  ASSERT_TRUE(whole);
  EXPECT_EQ(*whole, 0u);
}

TEST(Slab, RefusesWhatDoesNotFitAndWhatWasNeverTaken) {
  Slab s(4096, 256);
  EXPECT_FALSE(s.take(4097));
  EXPECT_FALSE(s.take(4000, 256));  // the gap pushes it past the end
  EXPECT_FALSE(s.give(0));
  auto a = s.take(10);
  ASSERT_TRUE(a);
  EXPECT_FALSE(s.give(*a + 256));
  EXPECT_TRUE(s.give(*a));
  EXPECT_FALSE(s.give(*a));  // twice
  Slab empty(0);
  EXPECT_FALSE(empty.take(1));
}

TEST(Slab, RandomTakesAndGivesNeverOverlapAndGiveEverythingBack) {
  Slab s(1 << 16, 256);
  std::mt19937 rng(7);
  std::vector<std::pair<uint64_t, uint64_t>> held;  // offset, bytes
  for (int i = 0; i < 5000; ++i) {
    if (!held.empty() && (rng() % 3 == 0 || held.size() > 40)) {
      size_t k = rng() % held.size();
      ASSERT_TRUE(s.give(held[k].first));
      held.erase(held.begin() + static_cast<long>(k));
      continue;
    }
    uint64_t bytes = 1 + rng() % 3000;
    auto at = s.take(bytes, (rng() % 2) * 512);
    if (!at) continue;
    ASSERT_LE(*at + bytes, s.size());
    for (auto& [o, n] : held) ASSERT_TRUE(*at + bytes <= o || o + n <= *at) << "overlap at " << *at;
    held.push_back({*at, bytes});
  }
  for (auto& [o, n] : held) ASSERT_TRUE(s.give(o));
  EXPECT_EQ(s.free_bytes(), s.size());
  EXPECT_EQ(s.taken(), 0u);
}

}  // namespace
}  // namespace kevo::runner
