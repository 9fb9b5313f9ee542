// bench/scripted_llm.py as bench/throughput.sh runs it (--latency-s, --distinct), talked to by
// kevo's own OpenAI client: requests in flight together are answered together after the latency,
// each with a kernel of its own, in the shape the client parses.
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include <nlohmann/json.hpp>

#include "llm/client.h"
#include "llm/parse_answer.h"
#include "test_util.h"
#include "util/subprocess.h"

namespace kevo::llm {
namespace {

using namespace std::chrono_literals;
constexpr const char* kPython = "/usr/bin/python3";

// The server's "PORT N" line (it prints it once listening), or 0 after `limit`.
int read_port(int fd, std::chrono::milliseconds limit) {
  std::string got;
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    char buf[256];
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) return 0;
    got.append(buf, static_cast<size_t>(n));
    if (auto at = got.find("PORT "); at != std::string::npos && got.find('\n', at) != std::string::npos)
      return std::atoi(got.c_str() + at + 5);
  }
  return 0;
}

TEST(ScriptedServer, AnswersConcurrentRequestsAfterItsLatencyWithDistinctKernels) {
  if (!std::filesystem::exists(kPython)) GTEST_SKIP() << "skipped: " << kPython << " is not installed";
  const std::string root = KEVO_SOURCE_DIR;
  auto child = spawn_process({.argv = {kPython, root + "/bench/scripted_llm.py", "--root", root, "--latency-s", "1",
                                       "--distinct"},
                              .die_with_parent = true});
  ASSERT_TRUE(child) << child.error().message;
  struct Reap {
    Child& c;
    ~Reap() { kill_and_reap(c); }
  } reap{*child};
  const int port = read_port(child->out_fd, 10s);
  ASSERT_GT(port, 0) << "the server printed no port";

  auto ctx = make_context(testing::test_config("http://127.0.0.1:1/v1"), {.seed = 1});
  auto client = make_client(fmt::format("http://127.0.0.1:{}/v1#scripted", port), ctx);
  ASSERT_TRUE(client) << client.error().message;
  CancelToken cancel;
  Result<ChatResponse> answers[2] = {fail("not asked"), fail("not asked")};
  double took[2] = {0, 0};
  const auto t0 = std::chrono::steady_clock::now();
  std::thread asks[2];
  for (int i = 0; i < 2; ++i)
    asks[i] = std::thread([&, i] {
      answers[i] = (*client)->chat(ChatRequest::user("Task: softmax\nMake it faster."), cancel);
      took[i] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    });
  for (auto& t : asks) t.join();
  std::string code[2];
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(answers[i]) << answers[i].error().message;
    EXPECT_GE(took[i], 0.95) << "answered before its latency";
    EXPECT_LT(took[i], 1.8) << "the two requests were answered one after the other";
    EXPECT_EQ(answers[i]->finish, FinishReason::kStop);
    auto c = extract_code(answers[i]->text);
    ASSERT_TRUE(c) << answers[i]->text;
    EXPECT_NE(c->find("kevo_forward"), std::string::npos) << *c;
    EXPECT_NE(c->find("constexpr int kDistinctAnswer = "), std::string::npos) << *c;
    code[i] = *c;
  }
  EXPECT_NE(code[0], code[1]);
}

}  // namespace
}  // namespace kevo::llm
