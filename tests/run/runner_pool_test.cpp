// The runner pool against fake runners (a Python script speaking the framing): runners handed out
// once and fresh, their deaths classified as if they were the taker's own children, and the pool
// ending what a taker leaves behind. The pool is the built `kevo runners serve` in its own process.
#include "run/runner_pool.h"
#include "util/gpu_lock.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <fstream>
#include <thread>

#include "support/runner_pool.h"
#include "util/fd_passing.h"
#include "support/temp_dir.h"
#include "util/subprocess.h"

using namespace kevo;
using namespace std::chrono_literals;

namespace {

std::filesystem::path scratch() {
  static const std::filesystem::path p = kevo::test::temp_dir_until_exit("kevo-pool-test");
  return p;
}

// Echoes commands, says hello, writes into the arena, and crashes or hangs when told. Every reply
// names the bytes it runs from (what its interpreter reads: the file it was started as).
const char* kFake = R"(#!/usr/bin/env python3
import hashlib, json, mmap, os, signal, struct, sys, time
req, rep = os.fdopen(4, 'rb', buffering=0), os.fdopen(5, 'wb', buffering=0)
me = hashlib.sha256(open(sys.argv[0], 'rb').read()).hexdigest()
while True:
    n = req.read(4)
    if len(n) < 4: sys.exit(0)
    msg = json.loads(req.read(struct.unpack('<I', n)[0]))
    cmd = msg['cmd']
    if cmd == 'crash': os.kill(os.getpid(), signal.SIGSEGV)
    if cmd == 'hang': time.sleep(60)
    if cmd == 'fill':
        m = mmap.mmap(3, msg['arena_size'])
        m[0:5] = b'hello'
        m.close()
    out = {'ok': True, 'echo': cmd, 'pid': os.getpid(), 'ppid': os.getppid(), 'cwd': os.getcwd(), 'self_sha256': me}
    if cmd == 'hello': out.update({'name': 'Fake GPU', 'uuid': os.environ.get('FAKE_GPU_UUID', '')})
    out = json.dumps(out).encode()
    rep.write(struct.pack('<I', len(out)) + out)
)";

std::filesystem::path fake_runner() {
  static const std::filesystem::path p = [] {
    auto f = scratch() / "fake_pool_runner.py";
    std::ofstream(f) << kFake;
    std::filesystem::permissions(f, std::filesystem::perms::owner_all);
    return f;
  }();
  return p;
}

RunnerOptions fake_options() {
  RunnerOptions o;
  o.runner = fake_runner();
  return o;
}

bool process_gone(int pid, std::chrono::milliseconds within) {
  for (auto end = std::chrono::steady_clock::now() + within;
       std::chrono::steady_clock::now() < end;) {
    if (kill(pid, 0) != 0 && errno == ESRCH) return true;
    std::this_thread::sleep_for(5ms);
  }
  return false;
}

class RunnerPool : public testing::Test {
 protected:
  void SetUp() override {
    if (!find_program("python3")) GTEST_SKIP() << "python3 not installed";
    pool_ = std::make_unique<test::PoolForTest>(2, 0, fake_runner());
    ASSERT_TRUE(pool_->ok()) << "the pool did not start: " << pool_->log();
    // The first ask finds nothing ready and makes the pool keep this kind from then on.
    EXPECT_FALSE(take_pooled(fake_options()));
    ASSERT_TRUE(pool_->wait_ready(2)) << pool_->log();
  }
  std::unique_ptr<test::PoolForTest> pool_;
};

}  // namespace

TEST_F(RunnerPool, AReadyRunnerIsHandedOutOnceAndAnswers) {
  auto a = take_pooled(fake_options());
  auto b = take_pooled(fake_options());
  ASSERT_TRUE(a && b) << pool_->log();
  EXPECT_EQ(a->second.name, "Fake GPU");
  EXPECT_TRUE(a->first->pooled());
  auto ra = a->first->call_json({{"cmd", "who"}}, 5s);
  auto rb = b->first->call_json({{"cmd", "who"}}, 5s);
  ASSERT_TRUE(ra && rb);
  EXPECT_NE((*ra)["pid"], (*rb)["pid"]);                     // two processes
  EXPECT_EQ((*ra)["ppid"].get<long>(), pool_->child().pid);  // the pool's children, not ours
  ASSERT_TRUE(a->first->arena().resize(4096));  // the arena is shared through the handed fd
  ASSERT_TRUE(a->first->call_json({{"cmd", "fill"}, {"arena_size", 4096}}, 5s));
  EXPECT_EQ(std::string(reinterpret_cast<char*>(a->first->arena().data()), 5), "hello");
  auto s = pool_status();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->taken, 2);
  EXPECT_EQ(s->handed_out, 2);
}

TEST_F(RunnerPool, ACrashIsReportedWithItsSignal) {
  auto a = take_pooled(fake_options());
  ASSERT_TRUE(a);
  auto r = a->first->call_json({{"cmd", "crash"}}, 5s);
  ASSERT_FALSE(r);
  ASSERT_TRUE(a->first->death());
  EXPECT_EQ(a->first->death()->kind, RunnerDeath::Kind::Signal) << a->first->death()->description;
  EXPECT_EQ(a->first->death()->signal, SIGSEGV);
}

TEST_F(RunnerPool, AHangIsATimeoutAndThePoolKillsIt) {
  auto a = take_pooled(fake_options());
  ASSERT_TRUE(a);
  auto who = a->first->call_json({{"cmd", "who"}}, 5s);
  ASSERT_TRUE(who);
  const int pid = (*who)["pid"];
  auto r = a->first->call_json({{"cmd", "hang"}}, 300ms);
  ASSERT_FALSE(r);
  ASSERT_TRUE(a->first->death());
  EXPECT_EQ(a->first->death()->kind, RunnerDeath::Kind::Timeout);
  EXPECT_TRUE(process_gone(pid, 5s));
}

TEST_F(RunnerPool, ARunnerDiesWithTheProcessThatTookIt) {
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  pid_t taker = fork();
  if (taker == 0) {  // takes a runner and ends without a word: no close, no destructor
    auto a = take_pooled(fake_options());
    auto who = a ? a->first->call_json({{"cmd", "who"}}, 5s) : Result<json>(fail("none"));
    int pid = who ? (*who)["pid"].get<int>() : -1;
    (void)!write(p[1], &pid, sizeof pid);
    _exit(0);
  }
  ::close(p[1]);
  int pid = -1;
  ASSERT_EQ(read(p[0], &pid, sizeof pid), static_cast<ssize_t>(sizeof pid));
  ::close(p[0]);
  waitpid(taker, nullptr, 0);
  ASSERT_GT(pid, 0);
  EXPECT_TRUE(process_gone(pid, 5s));
}

// The pool runs only the bytes it read at its start: once the file holds others (a rebuild), a take
// that names it gets none (its client starts the new one itself) until the pool is restarted.
TEST_F(RunnerPool, ARebuiltRunnerBinaryIsNotHandedOut) {
  { std::ofstream(fake_runner(), std::ios::app) << "# rebuilt\n"; }
  EXPECT_FALSE(take_pooled(fake_options()));
  ASSERT_TRUE(pool_->wait_ready(2)) << pool_->log();
  EXPECT_FALSE(take_pooled(fake_options()));
  EXPECT_NE(pool_->log().find("no longer holds the kevo-runner this pool started with"), std::string::npos)
      << pool_->log();
}

TEST_F(RunnerPool, AnotherEnvironmentIsAnotherKind) {
  RunnerOptions o = fake_options();
  o.env["CUDA_VISIBLE_DEVICES"] = "1";
  EXPECT_FALSE(take_pooled(o));
  ASSERT_TRUE(pool_->wait_ready(4)) << pool_->log();
  EXPECT_TRUE(take_pooled(o));
}

TEST_F(RunnerPool, OffMeansNoPoolIsAsked) {
  ::setenv("KEVO_RUNNER_POOL", "off", 1);
  EXPECT_FALSE(take_pooled(fake_options()));
  ::setenv("KEVO_RUNNER_POOL", "use", 1);
  auto s = pool_status();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->taken, 0);
}

TEST_F(RunnerPool, StopWaitsForTheRunnersOut) {
  auto a = take_pooled(fake_options());
  ASSERT_TRUE(a);
  ASSERT_TRUE(stop_pool());
  EXPECT_FALSE(take_pooled(fake_options()));  // nothing new is handed out
  EXPECT_FALSE(wait_for_exit(pool_->child(), 300ms)) << "the pool ended under a runner still out";
  EXPECT_TRUE(a->first->call_json({{"cmd", "who"}}, 5s));  // the runner out still works
  a.reset();
  auto st = wait_for_exit(pool_->child(), 10s);
  ASSERT_TRUE(st) << "the pool did not end once its runner was back";
  pool_->child().pid = -1;
}

// A runner dies with its pool (it is the pool's child): the taker reads that as lost, which the
// checker makes an infra_error, never the candidate's crash.
TEST_F(RunnerPool, ARunnerLostWithItsPoolIsNotACrash) {
  auto a = take_pooled(fake_options());
  ASSERT_TRUE(a);
  ASSERT_GT(pool_->child().pid, 0);  // never kill(-1 or 0)
  kill(pool_->child().pid, SIGKILL);
  auto r = a->first->call_json({{"cmd", "who"}}, 5s);
  for (int i = 0; i < 50 && r; ++i) {  // the runner may answer once more before it is gone
    std::this_thread::sleep_for(20ms);
    r = a->first->call_json({{"cmd", "who"}}, 5s);
  }
  ASSERT_FALSE(r);
  ASSERT_TRUE(a->first->death());
  EXPECT_EQ(a->first->death()->kind, RunnerDeath::Kind::Lost) << a->first->death()->description;
}

// Whatever a client sends (not JSON, wrong types, half a kind) is refused with a reply; the pool
// keeps serving.
TEST_F(RunnerPool, MalformedRequestsAreRefusedAndThePoolServesOn) {
  auto dir = pool_dir(false);
  ASSERT_TRUE(dir);
  for (const char* bad : {"not json", "[1,2]", R"({"v":"1","cmd":"take"})", R"({"v":2,"cmd":7})",
                          R"({"v":2,"cmd":"take","kind":{"gpus":5}})", R"({"v":2,"cmd":"take","kind":{"gpus":"../x"}})",
                          R"({"v":2,"cmd":"take","kind":[]})"}) {
    auto s = connect_seqpacket(pool_socket(*dir));
    ASSERT_TRUE(s);
    ASSERT_TRUE(send_fd_message(*s, bad));
    auto m = recv_fd_message(*s, std::chrono::steady_clock::now() + 5s);
    ::close(*s);
    ASSERT_TRUE(m) << bad << ": " << m.error().message;
    json r = json::parse(m->bytes, nullptr, false);
    EXPECT_EQ(r.value("ok", true), false) << bad << " -> " << m->bytes;
    EXPECT_TRUE(m->fds.empty()) << bad;
  }
  auto st = pool_status();
  ASSERT_TRUE(st) << pool_->log();
  EXPECT_EQ(st->taken, 0);
  EXPECT_TRUE(take_pooled(fake_options()));
}

// The pool starts only what it defines: its own binary, its own environment, "/" as the folder. A
// client that names another binary, a working folder or an environment (LD_PRELOAD of a candidate
// on kevo's own runner: code outside every sandbox) is refused, and nothing is started for it.
TEST_F(RunnerPool, AClientCannotChooseTheBinaryFolderOrEnvironment) {
  auto dir = pool_dir(false);
  ASSERT_TRUE(dir);
  const std::string fake = fake_runner().string();
  for (const std::string& bad :
       std::vector<std::string>{R"({"v":2,"cmd":"take","kind":{},"runner":"/bin/sh"})",
        R"({"v":2,"cmd":"take","kind":{"gpus":"0"}})",
        R"({"v":2,"cmd":"take","kind":{"env":["LD_PRELOAD=/tmp/candidate.so"]},"runner":")" + fake + R"("})",
        R"({"v":2,"cmd":"take","kind":{"cwd":"/tmp"},"runner":")" + fake + R"("})",
        R"({"v":2,"cmd":"take","kind":{"runner":"/bin/sh","cwd":"/","env":[]},"runner":")" + fake + R"("})"}) {
    auto s = connect_seqpacket(pool_socket(*dir));
    ASSERT_TRUE(s);
    ASSERT_TRUE(send_fd_message(*s, bad));
    auto m = recv_fd_message(*s, std::chrono::steady_clock::now() + 5s);
    ::close(*s);
    ASSERT_TRUE(m) << bad;
    json r = json::parse(m->bytes, nullptr, false);
    EXPECT_EQ(r.value("ok", true), false) << bad << " -> " << m->bytes;
    EXPECT_TRUE(m->fds.empty()) << bad;
  }
  auto st = pool_status();
  ASSERT_TRUE(st);
  EXPECT_EQ(st->kinds, 1) << "a refused take made the pool keep a kind";
  // Options a pool's runner cannot match are not taken from the pool at all.
  RunnerOptions o = fake_options();
  o.env["LD_PRELOAD"] = "/tmp/candidate.so";
  EXPECT_FALSE(take_pooled(o));
  o = fake_options();
  o.cwd = "/tmp";
  EXPECT_FALSE(take_pooled(o));
  // What a runner of the pool runs with: the pool's folder, never a client's.
  auto a = take_pooled(fake_options());
  ASSERT_TRUE(a) << pool_->log();
  auto who = a->first->call_json({{"cmd", "cwd"}}, 5s);
  ASSERT_TRUE(who);
  EXPECT_EQ((*who)["cwd"], "/");
}

// SIGTERM or Ctrl-C (SIGINT) ends the pool: its ready runners die with it and its socket goes.
TEST_F(RunnerPool, ASignalEndsThePoolAndItsRunners) {
  auto a = take_pooled(fake_options());
  ASSERT_TRUE(a);
  auto who = a->first->call_json({{"cmd", "who"}}, 5s);
  ASSERT_TRUE(who);
  const int pid = (*who)["pid"];
  auto dir = pool_dir(false);
  ASSERT_TRUE(dir);
  ASSERT_GT(pool_->child().pid, 0);
  kill(pool_->child().pid, SIGINT);
  ASSERT_TRUE(wait_for_exit(pool_->child(), 10s)) << pool_->log();
  pool_->child().pid = -1;
  EXPECT_TRUE(process_gone(pid, 5s));
  EXPECT_FALSE(std::filesystem::exists(pool_socket(*dir)));
  EXPECT_FALSE(a->first->call_json({{"cmd", "who"}}, 5s));
  ASSERT_TRUE(a->first->death());
  EXPECT_EQ(a->first->death()->kind, RunnerDeath::Kind::Lost) << a->first->death()->description;
}

// A refill waits while an evaluation still holds a runner (its correctness phase would share the GPU
// with the new context), and starts once that runner has ended.
TEST(RunnerPoolRefill, WaitsWhileARunnerIsOutAndStartsWhenItEnds) {
  if (!find_program("python3")) GTEST_SKIP() << "python3 not installed";
  test::PoolForTest pool(2, 600000, fake_runner());
  ASSERT_TRUE(pool.ok()) << pool.log();
  EXPECT_FALSE(take_pooled(fake_options()));
  ASSERT_TRUE(pool.wait_ready(2)) << pool.log();  // nothing out: the first fill is not held back
  auto a = take_pooled(fake_options());
  ASSERT_TRUE(a) << pool.log();
  std::this_thread::sleep_for(700ms);  // the refill polls every 50 ms: it would have started
  auto s = pool_status();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->ready, 1);
  EXPECT_EQ(s->handed_out, 1);
  EXPECT_EQ(s->started, 2);
  a.reset();  // the taker drops it: the pool kills and reaps it, then refills
  EXPECT_TRUE(pool.wait_ready(2)) << pool.log();
}

// A refill takes the GPU's shared lock even when every ready runner has been handed out (it knows
// the GPU from the runners it started before), so a new context never lands in a timing.
TEST(RunnerPoolRefill, WaitsForTheGpuLockWhenNoneIsReady) {
  if (!find_program("python3")) GTEST_SKIP() << "python3 not installed";
  test::TempDir locks("kevo-pool-locks");
  ::setenv("KEVO_LOCK_DIR", locks.path.c_str(), 1);
  struct Unset {
    ~Unset() { ::unsetenv("KEVO_LOCK_DIR"); }
  } unset;
  RunnerOptions o = fake_options();
  ::setenv("FAKE_GPU_UUID", "GPU-pool-test", 1);  // the pool's environment is its runners'
  test::PoolForTest pool(1, 0, fake_runner());     // one spare: taking it leaves none ready
  ::unsetenv("FAKE_GPU_UUID");
  ASSERT_TRUE(pool.ok()) << pool.log();
  EXPECT_FALSE(take_pooled(o));
  ASSERT_TRUE(pool.wait_ready(1)) << pool.log();
  {
    auto timing = GpuLock::acquire("GPU-pool-test", 5s);  // what a timing session holds
    ASSERT_TRUE(timing) << timing.error().message;
    auto a = take_pooled(o);
    ASSERT_TRUE(a) << pool.log();
    std::this_thread::sleep_for(700ms);
    auto s = pool_status();
    ASSERT_TRUE(s);
    EXPECT_EQ(s->started, 1) << "a runner started while the GPU was being timed";
    EXPECT_EQ(s->ready, 0);
  }
  EXPECT_TRUE(pool.wait_ready(1)) << pool.log();  // the lock is free: the refill goes on
}

TEST(RunnerPoolDir, AFolderOpenToOthersIsRefused) {
  test::TempDir d("kevo-pool-dir");
  ::setenv("KEVO_RUNNER_POOL_DIR", (d.path / "p").c_str(), 1);
  auto ok = pool_dir(true);
  ASSERT_TRUE(ok) << ok.error().message;
  chmod((d.path / "p").c_str(), 0755);
  auto open = pool_dir(false);
  ASSERT_FALSE(open);
  EXPECT_NE(open.error().message.find("open to other users"), std::string::npos)
      << open.error().message;
  std::filesystem::remove(d.path / "p");
  std::filesystem::create_directory_symlink(d.path, d.path / "p");
  auto link = pool_dir(false);
  ASSERT_FALSE(link);
  EXPECT_NE(link.error().message.find("not a folder"), std::string::npos) << link.error().message;
  ::unsetenv("KEVO_RUNNER_POOL_DIR");
}

TEST(RunnerPoolDir, NoPoolMeansNoRunnerAndNoFolderMade) {
  test::TempDir d("kevo-pool-dir");
  ::setenv("KEVO_RUNNER_POOL_DIR", (d.path / "none").c_str(), 1);
  ::setenv("KEVO_RUNNER_POOL", "use", 1);
  EXPECT_FALSE(take_pooled(fake_options()));
  EXPECT_FALSE(std::filesystem::exists(d.path / "none"));
  auto s = pool_status();
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, ErrorCode::kNotFound);
  ::setenv("KEVO_RUNNER_POOL", "off", 1);
  ::unsetenv("KEVO_RUNNER_POOL_DIR");
}

namespace {
// A fake runner of its own (the test rewrites it) and its bytes' SHA-256.
std::filesystem::path own_fake(const std::string& name) {
  auto f = scratch() / name;
  std::ofstream(f) << kFake;
  std::filesystem::permissions(f, std::filesystem::perms::owner_all);
  return f;
}

// What the runner says it runs from (its `self_sha256`); empty when it did not answer.
std::string runs_from(RunnerClient& c) {
  auto r = c.call_json({{"cmd", "whoami"}}, 10s);
  return r && r->contains("self_sha256") ? (*r)["self_sha256"].get<std::string>() : "";
}

// Rewrites the file in place with other bytes of the same length and puts its times back: its
// device, inode, size and mtime, all a file's identity, stay the same.
void rewrite_keeping_identity(const std::filesystem::path& f) {
  struct stat st {};
  ASSERT_EQ(stat(f.c_str(), &st), 0);
  std::string body = kFake;
  body.replace(body.find("b'hello'"), 8, "b'HELLO'");
  std::ofstream(f, std::ios::in | std::ios::out) << body;  // same length, no truncation
  const timespec times[2] = {st.st_atim, st.st_mtim};
  ASSERT_EQ(utimensat(AT_FDCWD, f.c_str(), times, 0), 0);
}
}  // namespace

// Rewritten on disk after the pool started (identity kept, so nothing about the file says it
// changed), the runner the pool starts next is still the one it read at its start: it runs from
// a sealed copy, not from the file.
TEST(RunnerPoolImage, ARunnerRewrittenOnDiskAfterThePoolStartedIsNotWhatItStarts) {
  if (!find_program("python3")) GTEST_SKIP() << "python3 not installed";
  const auto fake = own_fake("rewritten_runner.py");
  const auto original = file_sha256(fake);
  ASSERT_TRUE(original);
  test::PoolForTest pool(1, 600000, fake);  // no refill while a runner is out
  ASSERT_TRUE(pool.ok()) << pool.log();
  RunnerOptions o;
  o.runner = fake;
  EXPECT_FALSE(take_pooled(o));
  ASSERT_TRUE(pool.wait_ready(1)) << pool.log();
  auto a = take_pooled(o);
  ASSERT_TRUE(a) << pool.log();
  EXPECT_EQ(runs_from(*a->first), *original);
  rewrite_keeping_identity(fake);
  const auto rewritten = file_sha256(fake);
  ASSERT_TRUE(rewritten);
  ASSERT_NE(*rewritten, *original);
  a.reset();  // the refill starts the next one now, after the rewrite
  ASSERT_TRUE(RunnerClient::wait_reaped(10s));
  ASSERT_TRUE(pool.wait_ready(1)) << pool.log();
  auto b = take_pooled(o);
  ASSERT_TRUE(b) << pool.log();
  EXPECT_EQ(runs_from(*b->first), *original) << "the pool started the runner from the file on disk";
}

// A pool told which bytes to expect refuses to start from a file that holds others, and says so.
TEST(RunnerPoolImage, ATamperedRunnerIsRefusedAtStart) {
  if (!find_program("python3")) GTEST_SKIP() << "python3 not installed";
  const auto fake = own_fake("tampered_runner.py");
  const auto expected = file_sha256(fake);
  ASSERT_TRUE(expected);
  { std::ofstream(fake, std::ios::app) << "os.system('id')\n"; }
  test::TempDir dir("kevo-pool-test");
  RunOptions ro;
  ro.argv = {std::string(KEVO_BINARY_DIR) + "/bin/kevo", "runners", "serve", "--runner", fake.string(),
             "--runner-sha256", *expected, "--idle-exit", "5"};
  ro.env_add = {{"KEVO_RUNNER_POOL_DIR", (dir.path / "pool").string()}};
  ro.timeout = 20s;
  auto r = run_process(ro);
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->ok()) << "a pool started from a tampered runner";
  EXPECT_NE(r->err.find("is not the expected one: its SHA-256 is"), std::string::npos) << r->err;
  EXPECT_NE(r->err.find(*expected), std::string::npos) << r->err;
  EXPECT_FALSE(std::filesystem::exists(dir.path / "pool" / "pool.sock"));
}
