// The checker's side of the runner protocol, against fake runners (shell and Python scripts):
// replies, the shared arena, and classification of every way a runner can die.
#include "run/runner_client.h"

#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <regex>

#include "util/subprocess.h"
#include "support/temp_dir.h"

using namespace kevo;
using namespace std::chrono_literals;

// Every scratch file of this test binary lives in one folder removed at exit (support/temp_dir.h).
static std::filesystem::path scratch() {
  static const std::filesystem::path p = kevo::test::temp_dir_until_exit("kevo-checker-test");
  return p;
}

namespace {

std::filesystem::path script(const std::string& name, const std::string& body) {
  auto p = scratch() / name;
  std::ofstream(p) << body;
  std::filesystem::permissions(p, std::filesystem::perms::owner_all);
  return p;
}

std::unique_ptr<RunnerClient> start(const std::filesystem::path& p) {
  RunnerOptions o;
  o.runner = p;
  auto r = RunnerClient::start(o);
  EXPECT_TRUE(r) << (r ? "" : r.error().message);
  return r ? std::move(*r) : nullptr;
}

// A fake runner speaking the real framing: echoes the command and writes into the arena.
const char* kEcho = R"(#!/usr/bin/env python3
import json, mmap, os, struct, sys
req, rep = os.fdopen(4, 'rb', buffering=0), os.fdopen(5, 'wb', buffering=0)
while True:
    n = req.read(4)
    if len(n) < 4: sys.exit(0)
    msg = json.loads(req.read(struct.unpack('<I', n)[0]))
    if msg['cmd'] == 'fill':
        m = mmap.mmap(3, msg['arena_size'])
        m[0:5] = b'hello'
        m.close()
    if msg['cmd'] == 'print':
        print('candidate chatter on stdout', flush=True)
    out = json.dumps({'ok': True, 'echo': msg['cmd']}).encode()
    rep.write(struct.pack('<I', len(out)) + out)
)";

}  // namespace

// KEVO_TRACE_CALLS=1: each call's round trip on stderr, with the runner's own account of its
// driver calls when the reply carries one (runner/op_trace.h); nothing when unset.
TEST(RunnerClient, TracedCallsShowTheRunnersOwnAccount) {
  if (!find_program("python3")) GTEST_SKIP() << "python3 not installed";
  auto p = script("fake_traced.py", R"(#!/usr/bin/env python3
import json, os, struct, sys
req, rep = os.fdopen(4, 'rb', buffering=0), os.fdopen(5, 'wb', buffering=0)
while True:
    n = req.read(4)
    if len(n) < 4: sys.exit(0)
    msg = json.loads(req.read(struct.unpack('<I', n)[0]))
    out = {'ok': True}
    if msg['cmd'] == 'run': out['trace'] = {'handler_ms': 3.5, 'alloc_ms': 2.25, 'allocs': 2}
    out = json.dumps(out).encode()
    rep.write(struct.pack('<I', len(out)) + out)
)");
  auto c = start(p);
  ASSERT_TRUE(c);
  ::setenv("KEVO_TRACE_CALLS", "1", 1);
  testing::internal::CaptureStderr();
  auto run = c->call_json({{"cmd", "run"}}, 10s);
  auto hello = c->call_json({{"cmd", "hello"}}, 10s);
  std::string traced = testing::internal::GetCapturedStderr();
  ::unsetenv("KEVO_TRACE_CALLS");
  ASSERT_TRUE(run && hello);
  EXPECT_TRUE(std::regex_search(traced, std::regex(R"(kevo-trace [0-9]+ run [0-9.]+ \{"alloc_ms":2.25,"allocs":2,"handler_ms":3.5\}\n)")))
      << traced;
  EXPECT_TRUE(std::regex_search(traced, std::regex(R"(kevo-trace [0-9]+ hello [0-9.]+\n)"))) << traced;
  testing::internal::CaptureStderr();
  ASSERT_TRUE(c->call_json({{"cmd", "run"}}, 10s));
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "") << "traced without KEVO_TRACE_CALLS";
}

TEST(RunnerClient, RepliesAndArena) {
  if (!find_program("python3")) GTEST_SKIP() << "python3 not installed";
  auto r = start(script("echo_runner.py", kEcho));
  ASSERT_TRUE(r);
  auto a = r->call_json({{"cmd", "hello"}}, 10s);
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ((*a)["echo"], "hello");
  ASSERT_TRUE(r->arena().resize(4096));
  auto b = r->call_json({{"cmd", "fill"}, {"arena_size", 4096}}, 10s);
  ASSERT_TRUE(b);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(r->arena().data()), 5), "hello");
  // Output on the runner's stdout never reaches the protocol channel.
  auto c = r->call_json({{"cmd", "print"}}, 10s);
  ASSERT_TRUE(c);
  EXPECT_EQ((*c)["echo"], "print");
  EXPECT_FALSE(r->death());
}

TEST(RunnerClient, HangIsATimeoutAndTheProcessIsKilled) {
  auto r = start(script("hang_runner.sh", "#!/bin/sh\nsleep 60 & sleep 60\n"));
  ASSERT_TRUE(r);
  auto t0 = std::chrono::steady_clock::now();
  auto a = r->call_json({{"cmd", "hello"}}, 300ms);
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error().code, ErrorCode::kTimeout) << a.error().message;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  ASSERT_TRUE(r->death());
  EXPECT_EQ(r->death()->kind, RunnerDeath::Kind::Timeout);
  EXPECT_FALSE(r->alive());
  // Further calls fail at once instead of hanging.
  auto again = r->call_json({{"cmd", "hello"}}, 10s);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, ErrorCode::kProcessDied);
}

TEST(RunnerClient, SegfaultIsASignalWithItsLastWords) {
  auto r = start(script("segv_runner.sh", "#!/bin/sh\necho 'about to crash' >&2\nkill -SEGV $$\n"));
  ASSERT_TRUE(r);
  auto a = r->call_json({{"cmd", "run"}}, 10s);
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error().code, ErrorCode::kProcessDied) << a.error().message;
  ASSERT_TRUE(r->death());
  EXPECT_EQ(r->death()->kind, RunnerDeath::Kind::Signal);
  EXPECT_EQ(r->death()->signal, SIGSEGV);
  EXPECT_NE(r->death()->stderr_tail.find("about to crash"), std::string::npos);
  EXPECT_EQ(r->death()->during, "run");
}

TEST(RunnerClient, AbortAndExitAreDistinguished) {
  auto r = start(script("abrt_runner.sh", "#!/bin/sh\nkill -ABRT $$\n"));
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->call_json({{"cmd", "run"}}, 10s));
  ASSERT_TRUE(r->death());
  EXPECT_EQ(r->death()->signal, SIGABRT);

  auto e = start(script("exit_runner.sh", "#!/bin/sh\nexit 0\n"));
  ASSERT_TRUE(e);
  EXPECT_FALSE(e->call_json({{"cmd", "run"}}, 10s));
  ASSERT_TRUE(e->death());
  EXPECT_EQ(e->death()->kind, RunnerDeath::Kind::Exited);
  EXPECT_EQ(e->death()->exit_code, 0);
}

TEST(RunnerClient, MissingRunnerIsAnError) {
  RunnerOptions o;
  o.runner = "/nonexistent/kevo-runner";
  auto r = RunnerClient::start(o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kNotFound) << r.error().message;
}

// A wrapper (like compute-sanitizer) prints its summary only after the runner it wraps exits,
// which can take longer than the destructor's grace: finish() waits for it.
TEST(RunnerClient, FinishWaitsForTheLastWordsOfAWrapper) {
  if (!find_program("python3")) GTEST_SKIP() << "python3 not installed";
  auto echo = script("echo_runner2.py", kEcho);
  auto wrap =
      script("slow_wrapper.sh", "#!/bin/sh\n" + echo.string() +
                                    "\nsleep 3\necho '========= ERROR SUMMARY: 0 errors' >&2\n");
  auto r = start(wrap);
  ASSERT_TRUE(r);
  ASSERT_TRUE(r->call_json({{"cmd", "hello"}}, 10s));
  std::string tail = r->finish(20s);  // the destructor alone would have killed it after 2 s
  EXPECT_NE(tail.find("ERROR SUMMARY: 0 errors"), std::string::npos) << tail;
  // A wrapper that never ends is killed once the grace is over.
  auto hang = script("hang_wrapper.sh", "#!/bin/sh\n" + echo.string() + "\nsleep 600\n");
  auto h = start(hang);
  ASSERT_TRUE(h);
  auto t0 = std::chrono::steady_clock::now();
  h->finish(500ms);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 60s);  // not the wrapper's 600 s
}

// The destructor does not wait for the runner's teardown (CUDA's takes ~0.1 s); a background thread
// reaps it, and kills one that does not end within the grace.
TEST(RunnerClient, DestructionDoesNotWaitForTheTeardownButReapsIt) {
  if (!find_program("python3")) GTEST_SKIP() << "python3 not installed";
  auto dir = scratch();
  auto marker = dir / "teardown_done", pidfile = dir / "teardown_pid", pidfile2 = dir / "stuck_pid";
  std::filesystem::remove(marker);
  std::string echo = kEcho;
  // Slow teardown: at EOF, sleep 1 s, leave a marker, exit.
  std::string slow = echo;
  slow.replace(slow.find("if len(n) < 4: sys.exit(0)"),
               std::string("if len(n) < 4: sys.exit(0)").size(),
               "if len(n) < 4:\n        import time; time.sleep(1); open('" + marker.string() +
                   "', 'w').write('x'); sys.exit(0)");
  slow.insert(slow.find("while True:"),
              "open('" + pidfile.string() + "', 'w').write(str(os.getpid()))\n");
  // Never ends on its own.
  std::string stuck = echo;
  stuck.replace(stuck.find("if len(n) < 4: sys.exit(0)"),
                std::string("if len(n) < 4: sys.exit(0)").size(),
                "if len(n) < 4:\n        import time; time.sleep(600)");
  stuck.insert(stuck.find("while True:"),
               "open('" + pidfile2.string() + "', 'w').write(str(os.getpid()))\n");
  auto a = start(script("slow_teardown.py", slow));
  auto b = start(script("stuck_teardown.py", stuck));
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(a->call_json({{"cmd", "hello"}}, 10s));  // both are up (and wrote their pids)
  ASSERT_TRUE(b->call_json({{"cmd", "hello"}}, 10s));
  a.reset();
  b.reset();
  EXPECT_FALSE(std::filesystem::exists(marker)) << "the destructor waited for the teardown";
  ASSERT_TRUE(RunnerClient::wait_reaped(30s));
  EXPECT_TRUE(std::filesystem::exists(marker)) << "the runner was not given its grace";
  for (const auto& f : {pidfile, pidfile2}) {
    std::ifstream in(f);
    int pid = 0;
    in >> pid;
    ASSERT_GT(pid, 0);
    EXPECT_NE(kill(pid, 0), 0) << "runner " << pid << " still exists (not killed or not reaped)";
  }
}

// The typed call: a reply of its type, the runner's refusal (kept whole: classify_death reads its
// fatal flag and CUDA error number), or a malformed reply, each told apart and none an exception.
TEST(RunnerClient, TypedCallsTellRepliesRefusalsAndNonsenseApart) {
  if (!find_program("python3")) GTEST_SKIP() << "python3 not installed";
  auto r = start(script("typed_runner.py", R"(#!/usr/bin/env python3
import json, os, struct, sys
req, rep = os.fdopen(4, 'rb', buffering=0), os.fdopen(5, 'wb', buffering=0)
while True:
    n = req.read(4)
    if len(n) < 4: sys.exit(0)
    msg = json.loads(req.read(struct.unpack('<I', n)[0]))
    out = {'ok': True, 'name': 'Fake', 'uuid': 'u-7'}
    if msg['cmd'] == 'load':
        out = {'ok': False, 'error': 'boom', 'fatal': True, 'cuda_error': 700}
    if msg['cmd'] == 'release':
        out = {'ok': True, 'extra': 1}
    if msg['cmd'] == 'bandwidth':
        out = {'ok': True, 'copy_gbps': 'fast'}
    b = json.dumps(out).encode()
    rep.write(struct.pack('<I', len(b)) + b)
)"));
  ASSERT_TRUE(r);
  auto h = r->call(proto::HelloRequest{}, 10s);
  ASSERT_TRUE(h) << h.error().message;
  EXPECT_EQ(h->uuid, "u-7");
  EXPECT_EQ(h->l2_bytes, uint64_t(50) << 20);  // not said: the checker's assumption
  auto l = r->call(proto::LoadRequest{"cand", "/x.so"}, 10s);
  ASSERT_FALSE(l);
  ASSERT_TRUE(l.refusal());
  EXPECT_TRUE(l.refusal()->fatal);
  EXPECT_EQ(l.refusal()->cuda_error, 700);
  EXPECT_EQ(l.error().message, "boom");
  EXPECT_TRUE(l.answered());
  EXPECT_TRUE(r->call(proto::ReleaseRequest{{""}}, 10s));  // unknown fields are ignored
  auto bw = r->call(proto::BandwidthRequest{}, 10s);
  ASSERT_FALSE(bw);
  EXPECT_TRUE(bw.failure().malformed);
  EXPECT_FALSE(bw.refusal());
  EXPECT_TRUE(bw.answered());
  EXPECT_FALSE(r->death());
}
