// Runners start from a sealed in-memory copy of the runner binary (run/runner_image.h): a binary
// replaced on disk after the copy was read is not what the next runner runs (seen from outside,
// through /proc/<pid>/exe), other bytes than the expected ones are refused, and the real
// kevo-runner exec'd from the copy still confines itself (seccomp, Landlock).
#include "run/runner_image.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "run/elf_runpath.h"
#include "run/runner_client.h"
#include "support/temp_dir.h"
#include "util/subprocess.h"

using namespace kevo;
namespace fs = std::filesystem;

namespace {

fs::path runner_binary() { return fs::path(KEVO_BINARY_DIR) / "bin" / "kevo-runner"; }

std::string exe_sha256(int pid) {
  auto d = file_sha256("/proc/" + std::to_string(pid) + "/exe");
  return d ? *d : "";
}

std::string read_all(int fd) {
  std::string s;
  char buf[4096];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) s.append(buf, static_cast<size_t>(n));
  return s;
}

}  // namespace

TEST(RunnerImage, ARunnerReplacedOnDiskIsNotWhatTheNextRunnerRuns) {
  if (!fs::exists(runner_binary())) GTEST_SKIP() << "kevo-runner not built here (no CUDA toolkit)";
  if (geteuid() != 0) GTEST_SKIP() << "reads an undumpable runner's /proc/<pid>/exe: needs root";
  test::TempDir dir("kevo-image-test");
  const fs::path bin = dir.path / "kevo-runner";
  fs::copy_file(runner_binary(), bin);
  const auto original = file_sha256(bin);
  ASSERT_TRUE(original);
  auto a = spawn_runner({.runner = bin});
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(exe_sha256(a->child.pid), *original);
  // Replaced (a new file under the name) with another runner: the same program, other bytes.
  fs::remove(bin);
  fs::copy_file(runner_binary(), bin);
  { std::ofstream(bin, std::ios::app) << "tampered"; }
  auto b = spawn_runner({.runner = bin});
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_EQ(exe_sha256(b->child.pid), *original) << "the runner was started from the file on disk";
  for (auto* r : {&*a, &*b}) kill_and_reap(r->child), r->close_fds();
}

TEST(RunnerImage, OtherBytesThanTheExpectedAreRefused) {
  test::TempDir dir("kevo-image-test");
  const fs::path f = dir.path / "runner";
  std::ofstream(f) << "#!/bin/sh\nexit 0\n";
  const auto good = file_sha256(f);
  ASSERT_TRUE(good);
  EXPECT_TRUE(RunnerImage::read(f, *good));
  std::ofstream(f) << "#!/bin/sh\nexit 1\n";
  auto bad = RunnerImage::read(f, *good);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("is not the expected one"), std::string::npos) << bad.error().message;
}

TEST(RunnerImage, TheCopyIsSealedAndReadOnly) {
  test::TempDir dir("kevo-image-test");
  const fs::path f = dir.path / "runner";
  std::ofstream(f) << "#!/bin/sh\nexit 0\n";
  auto im = RunnerImage::read(f);
  ASSERT_TRUE(im) << im.error().message;
  const int seals = fcntl((*im)->fd(), F_GET_SEALS);
  EXPECT_EQ(seals & (F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL),
            F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL);
  EXPECT_LT(write((*im)->fd(), "x", 1), 0);
  const std::string self = "/proc/self/fd/" + std::to_string((*im)->fd());
  const int w = open(self.c_str(), O_WRONLY | O_CLOEXEC);  // a new writable open: still sealed
  if (w >= 0) {
    EXPECT_LT(write(w, "x", 1), 0);
    close(w);
  }
  EXPECT_TRUE((*im)->script());
}

// `kevo-runner --isolation` from the copy: the runner confines itself as from its file.
TEST(RunnerImage, TheRealRunnerFromItsCopyStillConfinesItself) {
  if (!fs::exists(runner_binary())) GTEST_SKIP() << "kevo-runner not built here (no CUDA toolkit)";
  auto im = RunnerImage::read(runner_binary());
  ASSERT_TRUE(im) << im.error().message;
  SpawnOptions so;
  so.argv = {runner_binary().string(), "--isolation"};
  so.exec_fd = (*im)->fd();
  auto c = spawn_process(so);
  ASSERT_TRUE(c) << c.error().message;
  const std::string out = read_all(c->out_fd);
  const int status = kill_and_reap(*c);
  auto j = nlohmann::json::parse(out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << out << " (" << describe_wait_status(status) << ")";
  EXPECT_TRUE(j.value("seccomp", false)) << out;
  EXPECT_TRUE(j.value("undumpable", false)) << out;
  if (geteuid() == 0) {
    EXPECT_EQ(j.value("uid", -1), 65534) << out;
    EXPECT_TRUE(j.value("proc_private", false)) << out;
  }
}

TEST(ElfRunpath, OriginEntriesAreResolvedAndOthersLeftAlone) {
  EXPECT_EQ(origin_entries("$ORIGIN/../lib:/usr/local/cuda/lib:${ORIGIN}", "/opt/kevo/bin"),
            (std::vector<std::string>{"/opt/kevo/bin/../lib", "/opt/kevo/bin"}));
  EXPECT_TRUE(origin_entries("/usr/lib", "/x").empty());
  EXPECT_FALSE(elf_runpath("#!/bin/sh\n"));
}

TEST(ElfRunpath, ReadsTheRunnersOwnRunpath) {
  if (!fs::exists(runner_binary())) GTEST_SKIP() << "kevo-runner not built here (no CUDA toolkit)";
  std::ifstream in(runner_binary(), std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  auto rp = elf_runpath(bytes);
  ASSERT_TRUE(rp);
  EXPECT_NE(rp->find("/lib"), std::string::npos) << *rp;  // the CUDA toolkit's (BUILD_RPATH)
}
