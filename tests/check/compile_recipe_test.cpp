// One recipe for a candidate's compile: the checker's and a search's pre-compile ask the cache for
// the same key only if they build the same options.
#include "check/compile_recipe.h"

#include <gtest/gtest.h>

using namespace kevo;

TEST(CompileRecipe, TheTasksLibrariesTheArchAndTheCache) {
  Task t;
  auto plain = candidate_compile_options(t, "sm_90");
  EXPECT_EQ(plain.arch, "sm_90");
  EXPECT_TRUE(plain.link_libs.empty());
  EXPECT_TRUE(plain.cache_dir.empty());
  t.allow_cublas = t.allow_cudnn = true;
  auto libs = candidate_compile_options(t, "sm_100", "/tmp/c");
  EXPECT_EQ(libs.link_libs, (std::vector<std::string>{"cublas", "cudnn"}));
  EXPECT_EQ(libs.cache_dir, std::filesystem::path("/tmp/c"));
  EXPECT_EQ(libs.arch, "sm_100");
}

TEST(CompileRecipe, ADeviceIsRememberedWithoutItsArchSpecificSuffix) {
  EXPECT_EQ(device_arch("sm_90a"), "sm_90");
  EXPECT_EQ(device_arch("sm_90"), "sm_90");
  EXPECT_EQ(device_arch("a"), "a");
  EXPECT_EQ(device_arch(""), "");
}
