// Lint findings over many keys stay one readable line: keys grouped by kind, a few names shown.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "lint/key_list.h"
#include "lint/lint.h"

using namespace kevo;

namespace {

TEST(KeyList, GroupsKeysByKindAndCountsTheRest) {
  EXPECT_EQ(key_list({"input 'a'"}), "input 'a'");
  EXPECT_EQ(key_list({"input 'a'", "output 'y'", "input 'b'"}), "inputs 'a', 'b'; output 'y'");
  std::vector<std::string> many;
  for (int i = 0; i < 12; ++i) many.push_back(fmt::format("input 'w{}'", i));
  EXPECT_EQ(key_list(many, 3), "inputs 'w0', 'w1', 'w2' and 9 more");
  EXPECT_EQ(key_list({"nonfinite"}), "nonfinite");
}

// A task with 150 weights its output ignores (a module's buffers): input_unused fails with one
// short message naming a few of them and counting the others.
TEST(KeyList, ManyUnusedInputsMakeOneShortFinding) {
  std::string toml = "name = \"many\"\ncategory = \"lint_fixture\"\ndescription = \"150 unused weights\"\ndims = [\"N\"]\nflops = \"N\"\nbytes = \"8*N\"\n"
                     "[[inputs]]\nname = \"x\"\ndtype = \"f32\"\nshape = [\"N\"]\n";
  for (int i = 0; i < 150; ++i)
    toml += fmt::format("[[inputs]]\nname = \"buffer_{}\"\ndtype = \"f32\"\nshape = [\"N\"]\nrole = \"weight\"\n", i);
  toml += "[[outputs]]\nname = \"y\"\ndtype = \"f32\"\nshape = [\"N\"]\n"
          "[[configs]]\nname = \"a\"\ndims = { N = 33 }\n[[configs]]\nname = \"b\"\ndims = { N = 65 }\nmain = true\n"
          "[[configs]]\nname = \"c\"\ndims = { N = 17 }\n[[configs]]\nname = \"h\"\ndims = { N = 40 }\nheld_out = true\n";
  auto task = parse_task(toml, "many/task.toml");
  ASSERT_TRUE(task) << task.error().message;
  OutputsFn copy_x = [](const Config&, const std::vector<HostTensor>& in) -> Result<std::vector<std::vector<double>>> {
    std::vector<double> y(static_cast<size_t>(in[0].numel()));
    for (size_t i = 0; i < y.size(); ++i) y[i] = in[0].at(i);
    return std::vector<std::vector<double>>{y};
  };
  auto rep = lint_outputs(*task, copy_x);
  ASSERT_TRUE(rep) << rep.error().message;
  const LintFinding* unused = nullptr;
  for (const auto& f : rep->findings)
    if (f.check == "input_unused") unused = &f;
  ASSERT_NE(unused, nullptr);
  EXPECT_EQ(unused->severity, Severity::Fail);
  EXPECT_EQ(unused->keys.size(), 150u);
  EXPECT_NE(unused->message.find("inputs 'buffer_0', 'buffer_1'"), std::string::npos) << unused->message;
  EXPECT_NE(unused->message.find("and 142 more can be ignored"), std::string::npos) << unused->message;
  EXPECT_EQ(unused->message.find("'x'"), std::string::npos) << unused->message;
  for (const auto& f : rep->findings) EXPECT_LT(f.message.size(), 400u) << f.check << ": " << f.message;
}

}  // namespace
