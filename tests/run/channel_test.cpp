// The framed channel: a reply that does not come in time and a closed pipe are told apart by their
// codes (the runner client acts on the first), and a message crosses intact.
#include "run/channel.h"

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace kevo {
namespace {

struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() { EXPECT_EQ(pipe2(fd, O_CLOEXEC), 0); }
  ~Pipe() {
    for (int f : fd)
      if (f >= 0) ::close(f);
  }
  void close_write() { ::close(fd[1]), fd[1] = -1; }
};

TEST(Channel, AMessageCrossesIntact) {
  Pipe p;
  ASSERT_TRUE(write_message(p.fd[1], {{"cmd", "hello"}, {"n", 3}}));
  auto m = read_message(p.fd[0], std::chrono::steady_clock::now() + std::chrono::seconds(5));
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ((*m)["cmd"], "hello");
  EXPECT_EQ((*m)["n"], 3);
}

TEST(Channel, NoReplyInTimeIsATimeout) {
  Pipe p;
  auto m = read_message(p.fd[0], std::chrono::steady_clock::now() + std::chrono::milliseconds(50));
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().code, ErrorCode::kTimeout) << m.error().message;
}

TEST(Channel, AClosedPipeIsClosedNotATimeout) {
  Pipe p;
  p.close_write();
  auto m = read_message(p.fd[0], std::chrono::steady_clock::now() + std::chrono::seconds(5));
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().code, ErrorCode::kClosed) << m.error().message;
}

}  // namespace
}  // namespace kevo
