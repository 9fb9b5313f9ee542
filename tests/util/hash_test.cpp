#include "util/hash.h"

#include <gtest/gtest.h>

using namespace kevo;

TEST(Hash, Sha256KnownVector) {
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Hash, PartsAreLengthPrefixed) {
  EXPECT_NE(Sha256().add("ab").add("c").hex(), Sha256().add("a").add("bc").hex());
  EXPECT_EQ(Sha256().add("a").add("bc").hex(), Sha256().add("a").add("bc").hex());
}

TEST(Hash, Fnv) {
  EXPECT_NE(fnv1a64("a", 1), fnv1a64("b", 1));
  EXPECT_EQ(fnv1a64("", 0), 1469598103934665603ull);
}
