// The codes of load_task's errors, which callers act on (skip a malformed task, report a missing
// one): kParse for a malformed task.toml, kNotFound for what is not there, kIo for what cannot be
// read.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "support/temp_dir.h"
#include "task/task.h"

using namespace kevo;
namespace fs = std::filesystem;

namespace {

// A valid task (forward, CPU reference) whose parts the cases below break one at a time.
const char* kTask = R"(name = "scale"
category = "elementwise"
description = "y = 2 x"
dims = ["N"]
flops = "N"
bytes = "8*N"
[[inputs]]
name = "x"
dtype = "f32"
shape = ["N"]
[[outputs]]
name = "y"
dtype = "f32"
shape = ["N"]
[[configs]]
name = "main"
dims = { N = 1024 }
main = true
[[configs]]
name = "odd"
dims = { N = 33 }
[[configs]]
name = "one"
dims = { N = 1 }
[[configs]]
name = "held"
dims = { N = 77 }
held_out = true
)";

std::string replaced(std::string s, const std::string& from, const std::string& to) {
  auto p = s.find(from);
  EXPECT_NE(p, std::string::npos) << from;
  return p == std::string::npos ? s : s.replace(p, from.size(), to);
}

class TaskErrorCode : public ::testing::Test {
 protected:
  // A task folder holding `toml` as task.toml and the files every CPU-reference task needs.
  fs::path write_task(const std::string& toml) {
    fs::path d = tmp_.path / ("task" + std::to_string(++n_));
    fs::create_directories(d);
    std::ofstream(d / "task.toml") << toml;
    std::ofstream(d / "baseline.cu") << "// baseline\n";
    std::ofstream(d / "reference.cpp") << "// reference\n";
    return d;
  }
  test::TempDir tmp_{"kevo-task-error-code"};
  int n_ = 0;
};

}  // namespace

TEST_F(TaskErrorCode, TheValidTaskLoads) {
  auto t = load_task(write_task(kTask));
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->name, "scale");
}

TEST_F(TaskErrorCode, AMalformedTaskFileIsAParseError) {
  struct Case {
    const char *from, *to, *says;
  };
  const Case cases[] = {
      {"name = \"scale\"", "name = \"scale", "TOML syntax error"},              // TOML itself
      {"dims = [\"N\"]", "dims = [\"N\"]\ncolour = \"red\"", "unknown key"},    // a key kevo does not know
      {"dtype = \"f32\"\nshape = [\"N\"]\n[[outputs]]", "dtype = \"f99\"\nshape = [\"N\"]\n[[outputs]]",
       "inputs"},                                                                // a field's value
      {"name = \"main\"\n", "", "name"},                                         // a missing field
      {"flops = \"N\"", "flops = \"N - 2048\"", "flops"},                        // a check over the configs
      {"{ N = 1024 }", "{ N = \"many\" }", "configs"},                           // a config's value
  };
  for (const Case& c : cases) {
    fs::path dir = write_task(replaced(kTask, c.from, c.to));
    auto t = load_task(dir);
    ASSERT_FALSE(t) << c.to;
    EXPECT_EQ(t.error().code, ErrorCode::kParse) << c.to << ": " << t.error().message;
    // Errors name the file (and, from the parser, line and field).
    EXPECT_NE(t.error().message.find((dir / "task.toml").string()), std::string::npos) << t.error().message;
    EXPECT_NE(t.error().message.find(c.says), std::string::npos) << t.error().message;
  }
}

TEST_F(TaskErrorCode, WhatIsNotThereIsNotFound) {
  auto none = load_task(tmp_.path / "no-such-task");
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, ErrorCode::kNotFound) << none.error().message;

  fs::path no_toml = tmp_.path / "empty";
  fs::create_directories(no_toml);
  auto t = load_task(no_toml);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, ErrorCode::kNotFound) << t.error().message;

  fs::path d = write_task(kTask);
  fs::remove(d / "reference.cpp");
  auto no_ref = load_task(d);
  ASSERT_FALSE(no_ref);
  EXPECT_EQ(no_ref.error().code, ErrorCode::kNotFound) << no_ref.error().message;
}

TEST_F(TaskErrorCode, AnUnreadableTaskFileIsAnIoError) {
  // A link to itself cannot be opened (ELOOP) even by root, for whom permissions do not count.
  fs::path d = write_task(kTask);
  fs::remove(d / "task.toml");
  fs::create_symlink("task.toml", d / "task.toml");
  auto t = load_task(d);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, ErrorCode::kIo) << t.error().message;
}
