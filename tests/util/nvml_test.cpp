#include "util/nvml.h"

#include <gtest/gtest.h>

namespace kevo {
namespace {

TEST(Nvml, AMissingLibraryIsUnavailableWithItsReasonNotZero) {
  auto s = nvml_sampler({"0"}, "libkevo-no-such-nvml.so.1");
  ASSERT_NE(s, nullptr);
  EXPECT_FALSE(s->available());
  EXPECT_EQ(s->status().code, GpuUtilCode::kLibraryMissing);
  EXPECT_NE(s->status().message.find("libkevo-no-such-nvml.so.1"), std::string::npos) << s->status().message;
  EXPECT_FALSE(s->mean().has_value());
}

TEST(Nvml, ALibraryWithoutNvmlsFunctionsIsRefusedByName) {
  // libc is loadable and has none of NVML's symbols.
  auto o = open_nvml({"0"}, "libc.so.6");
  EXPECT_EQ(o.source, nullptr);
  EXPECT_EQ(o.status.code, GpuUtilCode::kSymbolMissing);
  EXPECT_NE(o.status.message.find("nvmlInit_v2"), std::string::npos) << o.status.message;
}

TEST(Nvml, NoGpusIsNotALibraryFailure) {
  auto o = open_nvml({}, "libkevo-no-such-nvml.so.1");
  EXPECT_EQ(o.source, nullptr);
  EXPECT_EQ(o.status.code, GpuUtilCode::kNoGpus);
}

// kevo's GPU names are CUDA_VISIBLE_DEVICES values for its runners; only the default device reads
// kevo's own variable.
TEST(Nvml, GpuNamesMapToNvmlIndicesOrUuids) {
  auto r = nvml_device_ref("2", "5,6");
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->by_uuid);
  EXPECT_EQ(r->index, 2u);  // a runner gets CUDA_VISIBLE_DEVICES=2: physical 2, whatever kevo's own says
  r = nvml_device_ref("", "5,6");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->index, 5u);  // the default device is the first kevo itself sees
  r = nvml_device_ref("", nullptr);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->index, 0u);
  r = nvml_device_ref("", "GPU-5c3e0a1b-aaaa-bbbb-cccc-0123456789ab");
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->by_uuid);
  EXPECT_EQ(r->uuid, "GPU-5c3e0a1b-aaaa-bbbb-cccc-0123456789ab");
  EXPECT_FALSE(nvml_device_ref("MIG-1234", nullptr));
  EXPECT_FALSE(nvml_device_ref("gpu0", nullptr));
}

}  // namespace
}  // namespace kevo
