// Logs below were captured from nvcc 13.0 (V13.0.88) with -Xptxas -v on this project's machines.
#include "compile/ptxas.h"

#include <gtest/gtest.h>

using namespace kevo;

namespace {

// Templates, an extern "C" kernel, a local array in registers (stack frame without spills).
constexpr const char* kTemplatesLog = R"(ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'plain_c' for 'sm_90'
ptxas info    : Function properties for plain_c
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 0 barriers
ptxas info    : Compile time = 23.891 ms
ptxas info    : Compiling entry function '_Z5spillPfPKfi' for 'sm_90'
ptxas info    : Function properties for _Z5spillPfPKfi
    256 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 128 registers, used 0 barriers, 256 bytes cumulative stack size
ptxas info    : Compile time = 22.669 ms
ptxas info    : Compiling entry function '_Z5tkernIdLi128EEvPKT_PS0_i' for 'sm_90'
ptxas info    : Function properties for _Z5tkernIdLi128EEvPKT_PS0_i
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 12 registers, used 1 barriers, 1024 bytes smem
ptxas info    : Compile time = 1.858 ms
ptxas info    : Compiling entry function '_Z5tkernIfLi256EEvPKT_PS0_i' for 'sm_90'
ptxas info    : Function properties for _Z5tkernIfLi256EEvPKT_PS0_i
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 1 barriers, 1024 bytes smem
ptxas info    : Compile time = 1.335 ms
)";

// -maxrregcount=32 forcing spills; a __noinline__ device function whose properties must not be
// attributed to a kernel; a kernel with only dynamic shared memory.
constexpr const char* kSpillLog = R"(ptxas info    : Overriding maximum register limit 256 for '_Z3dynPf' with  32 of maxrregcount option
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z3dynPf' for 'sm_90'
ptxas info    : Function properties for _Z3dynPf
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 1 barriers
ptxas info    : Compile time = 2.729 ms
ptxas info    : Compiling entry function '_Z5heavyPfPKfi' for 'sm_90'
ptxas info    : Function properties for _Z5heavyPfPKfi
    23360 bytes stack frame, 26612 bytes spill stores, 47120 bytes spill loads
ptxas info    : Used 64 registers, used 0 barriers, 23360 bytes cumulative stack size
ptxas info    : Compile time = 5128.699 ms
ptxas info    : Function properties for _Z6helperfi
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
)";

// Two -gencode targets: the same kernel once per architecture; sm_80 also reports cmem.
constexpr const char* kTwoArchLog = R"(ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z2mmILi16EEvN2ns4TileIXT_EEEPKfPf' for 'sm_80'
ptxas info    : Function properties for _Z2mmILi16EEvN2ns4TileIXT_EEEPKfPf
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 14 registers, used 1 barriers, 1024 bytes smem, 376 bytes cmem[0]
ptxas info    : Compile time = 2.066 ms
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z2mmILi16EEvN2ns4TileIXT_EEEPKfPf' for 'sm_90'
ptxas info    : Function properties for _Z2mmILi16EEvN2ns4TileIXT_EEEPKfPf
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 12 registers, used 1 barriers, 1024 bytes smem
ptxas info    : Compile time = 2.936 ms
)";

}  // namespace

TEST(Ptxas, ParsesTemplatesAndExternC) {
  auto ks = parse_ptxas(kTemplatesLog);
  ASSERT_EQ(ks.size(), 4u);
  EXPECT_EQ(ks[0].function, "plain_c");
  EXPECT_EQ(ks[0].arch, "sm_90");
  EXPECT_EQ(ks[0].registers, 10);
  EXPECT_EQ(ks[1].function, "spill(float*, float const*, int)");
  EXPECT_EQ(ks[1].registers, 128);
  EXPECT_EQ(ks[1].stack_bytes, 256);
  EXPECT_EQ(ks[1].spill_store_bytes, 0);
  EXPECT_EQ(ks[2].function, "void tkern<double, 128>(double const*, double*, int)");
  EXPECT_EQ(ks[2].mangled, "_Z5tkernIdLi128EEvPKT_PS0_i");
  EXPECT_EQ(ks[2].barriers, 1);
  EXPECT_EQ(ks[2].shared_bytes, 1024);
  EXPECT_EQ(ks[3].function, "void tkern<float, 256>(float const*, float*, int)");
  EXPECT_EQ(ks[3].registers, 10);
}

TEST(Ptxas, ParsesSpillsAndIgnoresDeviceFunctions) {
  auto ks = parse_ptxas(kSpillLog);
  ASSERT_EQ(ks.size(), 2u);
  EXPECT_EQ(ks[0].function, "dyn(float*)");
  EXPECT_EQ(ks[0].shared_bytes, 0);
  EXPECT_EQ(ks[0].barriers, 1);
  EXPECT_EQ(ks[1].function, "heavy(float*, float const*, int)");
  EXPECT_EQ(ks[1].registers, 64);
  EXPECT_EQ(ks[1].spill_store_bytes, 26612);
  EXPECT_EQ(ks[1].spill_load_bytes, 47120);
  EXPECT_EQ(ks[1].stack_bytes, 23360);
}

TEST(Ptxas, OneEntryPerArchitectureWithConstantBanks) {
  auto ks = parse_ptxas(kTwoArchLog);
  ASSERT_EQ(ks.size(), 2u);
  EXPECT_EQ(ks[0].arch, "sm_80");
  EXPECT_EQ(ks[0].const_bytes, 376);
  EXPECT_EQ(ks[0].registers, 14);
  EXPECT_EQ(ks[1].arch, "sm_90");
  EXPECT_EQ(ks[1].const_bytes, 0);
  EXPECT_EQ(ks[1].registers, 12);
  EXPECT_EQ(ks[0].function, "void mm<16>(ns::Tile<16>, float const*, float*)");
}

TEST(Ptxas, SumsSeveralConstantBanks) {
  auto ks = parse_ptxas(
      "ptxas info    : Compiling entry function 'k' for 'sm_86'\n"
      "ptxas info    : Used 32 registers, 4096 bytes smem, 380 bytes cmem[0], 8 bytes cmem[2]\n");
  ASSERT_EQ(ks.size(), 1u);
  EXPECT_EQ(ks[0].const_bytes, 388);
  EXPECT_EQ(ks[0].shared_bytes, 4096);
  EXPECT_EQ(ks[0].barriers, 0);
}

TEST(Ptxas, EmptyAndErrorLogsGiveNothing) {
  EXPECT_TRUE(parse_ptxas("").empty());
  EXPECT_TRUE(parse_ptxas("ptxas fatal   : Ptx assembly aborted due to errors\n").empty());
}

TEST(Ptxas, Demangle) {
  EXPECT_EQ(demangle("_Z3dynPf"), "dyn(float*)");
  EXPECT_EQ(demangle("plain_c"), "plain_c");
  EXPECT_EQ(demangle("_Zgarbage"), "_Zgarbage");
}
