#include "compile/pool.h"

#include <sys/resource.h>

#include <cerrno>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/small_fs.h"
#include "test_support.h"
#include "util/fs.h"

using namespace kevo;
using kevo::test::TempDir;
using kevo::test::write_text;
namespace fs = std::filesystem;

// A stand-in nvcc in `dir`: answers --version, and otherwise runs `body` with $out its -o file.
fs::path fake_nvcc(const fs::path& dir, const std::string& body) {
  fs::path fake = dir / "fake-nvcc";
  write_text(fake,
             "#!/bin/sh\n"
             "[ \"$1\" = --version ] && { echo 'fake nvcc 0.0'; exit 0; }\n"
             "while [ $# -gt 0 ]; do [ \"$1\" = -o ] && out=$2; shift; done\n" +
                 body,
             true);
  return fake;
}

TEST(CompilePool, RunsCompilesInParallel) {
  // A fake compiler that takes 1 s and writes the -o file, so concurrency shows in the wall time
  // regardless of how fast this machine's nvcc is.
  TempDir t;
  fs::path fake = fake_nvcc(t.path, "sleep 1\n: > \"$out\"\n");
  CompileOptions o;
  o.nvcc = fake.string();
  o.cache_dir = t.path / "cache";
  CompilePool pool(4);
  EXPECT_EQ(pool.threads(), 4);
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::future<Result<CompileResult>>> fs;
  for (int i = 0; i < 4; ++i) fs.push_back(pool.submit("// candidate " + std::to_string(i), "c.cu", o));
  for (auto& f : fs) {
    auto r = f.get();
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_TRUE(r->ok) << r->diagnostics;
    EXPECT_TRUE(fs::exists(r->so_path));
  }
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(wall, 3.0) << "4 one-second compiles on 4 threads took " << wall << " s";
}

// Every compiler process the pool starts runs at a lower priority than the process that owns the
// pool (background work beside a timing); a pool asked for no change leaves it alone.
TEST(CompilePool, CompilersRunAtALowerPriority) {
  TempDir t;
  // Writes its own niceness (field 19 of /proc/self/stat; the comm field has no spaces here) to -o.
  fs::path fake = fake_nvcc(t.path, "cut -d' ' -f19 /proc/$$/stat > \"$out\"\n");
  CompileOptions o;
  o.nvcc = fake.string();
  o.cache_dir = t.path / "cache";
  o.sandbox = SandboxMode::Off;  // the fake reads /proc
  o.parallel_front_ends = false;
  errno = 0;
  const int mine = getpriority(PRIO_PROCESS, 0);
  ASSERT_EQ(errno, 0);
  auto nice_of = [&](CompilePool& pool, const std::string& src) {
    auto r = pool.submit(src, "c.cu", o).get();
    EXPECT_TRUE(r && r->ok) << (r ? r->diagnostics : r.error().message);
    auto text = r && r->ok ? read_file(r->so_path) : Result<std::string>(fail("no output"));
    return text ? std::stoi(*text) : -100;
  };
  CompilePool background(1);
  EXPECT_EQ(nice_of(background, "// one\n"), std::min(19, mine + CompilePool::kBackgroundNice));
  CompilePool normal(1, 0);
  EXPECT_EQ(nice_of(normal, "// two\n"), mine);
  EXPECT_EQ(getpriority(PRIO_PROCESS, 0), mine) << "the caller's own priority changed";
}

TEST(CompilePool, RealCompilesIncludingTheSameSourceTwice) {
  KEVO_REQUIRE_NVCC(nvcc);
  TempDir t;
  CompileOptions o;
  o.nvcc = nvcc;
  o.cache_dir = t.path / "cache";
  auto src = [](int k) {
    return "#include <kevo/kernel.h>\n__global__ void k(float* y) { y[threadIdx.x] = " + std::to_string(k) +
           "; }\nKEVO_EXPORT int kevo_forward(const kevo_args* a) { k<<<1, 32, 0, a->stream>>>((float*)a->outputs[0].data); return 0; }\n";
  };
  CompilePool pool(2);
  // Two identical sources race to store the same cache entry; both must succeed.
  std::vector<std::future<Result<CompileResult>>> fs;
  fs.push_back(pool.submit(src(1), "a.cu", o));
  fs.push_back(pool.submit(src(1), "b.cu", o));
  fs.push_back(pool.submit(src(2), "c.cu", o));
  std::vector<CompileResult> rs;
  for (auto& f : fs) {
    auto r = f.get();
    ASSERT_TRUE(r) << r.error().message;
    ASSERT_TRUE(r->ok) << r->diagnostics;
    EXPECT_TRUE(fs::exists(r->so_path));
    rs.push_back(*r);
  }
  EXPECT_EQ(rs[0].cache_key, rs[1].cache_key);
  EXPECT_EQ(rs[0].so_path, rs[1].so_path);
  EXPECT_NE(rs[0].cache_key, rs[2].cache_key);
}

// The compile cache's disk fills up (a 256 KiB tmpfs): the compile is an error that says so and
// names the cache, nothing half-written is kept as a cache entry, and once there is room the same
// source compiles and is cached.
TEST(CompileCache, DiskFullIsAClearErrorAndTheCacheRecovers) {
  kevo::test::SmallFs small("cache", "size=256k");
  if (!small.ok) GTEST_SKIP() << "cannot mount a tmpfs (needs root)";
  TempDir t;
  // Writes 1 MiB to its -o file, as nvcc writing a large object would; `head` says "No space left
  // on device" as the toolchain does. (Not from /dev/zero: the Landlock sandbox hides /dev.)
  fs::path fake;
  auto fake_writing = [&](int bytes) {
    fake = fake_nvcc(t.path, "yes 0123456789abcdef | head -c " + std::to_string(bytes) + " > \"$out\"\n");
  };
  fake_writing(1 << 20);
  CompileOptions o;
  o.nvcc = fake.string();
  o.cache_dir = small.dir / "cache";
  CompilePool pool(1);
  auto full = pool.submit("// candidate\n", "c.cu", o).get();
  ASSERT_FALSE(full) << "a 1 MiB object fit a 256 KiB file system: ok " << full->ok << " driver " << full->driver
                      << " so " << full->so_path << " diagnostics " << full->diagnostics;
  EXPECT_THAT(full.error().message, ::testing::HasSubstr("no space left on device")) << full.error().message;
  EXPECT_THAT(full.error().message, ::testing::HasSubstr(o.cache_dir.string())) << full.error().message;
  fake_writing(1024);
  auto fits = pool.submit("// candidate\n", "c.cu", o).get();
  ASSERT_TRUE(fits) << fits.error().message;
  EXPECT_TRUE(fits->ok) << fits->diagnostics;
  EXPECT_FALSE(fits->cache_hit) << "the failed compile left an entry behind";
}
