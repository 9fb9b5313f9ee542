// The checker's outside view of a candidate's runner: what /proc/<pid>/status says, and a runner's
// confinement report that disagrees with it refused.
#include "check/isolation.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <thread>

using namespace kevo;

TEST(Isolation, ReadsIdsAndThreadsFromProc) {
  auto c = read_proc_confinement(getpid());
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->uid[0], static_cast<int>(getuid()));
  EXPECT_EQ(c->uid[1], static_cast<int>(geteuid()));
  const int before = proc_threads(getpid());
  EXPECT_GE(before, 1);
  std::atomic<bool> stop{false};
  std::thread t([&] {
    while (!stop) std::this_thread::yield();
  });
  EXPECT_EQ(proc_threads(getpid()), before + 1);
  stop = true;
  t.join();
  EXPECT_EQ(proc_threads(-1), -1);
  EXPECT_FALSE(read_proc_confinement(0x7ffffff0));
}

TEST(Isolation, AReportThatDisagreesWithProcIsRefused) {
  proto::Isolation r;
  r.uid = static_cast<int>(geteuid());
  r.undumpable = true;
  auto ok = confirm_isolation(r, getpid());  // this process: its real ids, no filter claimed
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_TRUE(ok->outside_checked);
  EXPECT_TRUE(ok->same_user);
  r.uid = static_cast<int>(geteuid()) + 1;  // another identity than the process has
  auto bad_uid = confirm_isolation(r, getpid());
  ASSERT_FALSE(bad_uid);
  EXPECT_NE(bad_uid.error().message.find("reports uid"), std::string::npos) << bad_uid.error().message;
  r.uid = static_cast<int>(geteuid());
  r.seccomp = true;  // this test process has no filter
  auto bad_filter = confirm_isolation(r, getpid());
  ASSERT_FALSE(bad_filter);
  EXPECT_NE(bad_filter.error().message.find("Seccomp"), std::string::npos) << bad_filter.error().message;
  auto unknown = confirm_isolation(r, 0);  // no pid: the report, unconfirmed
  ASSERT_TRUE(unknown);
  EXPECT_FALSE(unknown->outside_checked);
}

TEST(Isolation, WeakWhereRootIsKeptOrNoFilterAndRoundTrips) {
  Isolation i;
  i.uid = 65534;
  i.identity_dropped = true;
  i.landlock_abi = 6;
  i.landlock_scoped = true;
  i.seccomp = true;
  i.undumpable = true;
  i.outside_checked = true;
  EXPECT_FALSE(i.weak());
  auto back = Isolation::from_json(i.to_json());
  EXPECT_EQ(back.uid, 65534);
  EXPECT_TRUE(back.identity_dropped && back.landlock_scoped && back.seccomp && back.outside_checked);
  EXPECT_EQ(back.landlock_abi, 6);
  EXPECT_NE(i.describe().find("gave up root"), std::string::npos) << i.describe();
  Isolation root = i;
  root.uid = 0;
  root.identity_dropped = false;
  EXPECT_TRUE(root.weak());
  Isolation no_filter = i;
  no_filter.seccomp = false;
  EXPECT_TRUE(no_filter.weak());
  EXPECT_FALSE(Isolation::from_json(nlohmann::json::array()).seccomp);
}
