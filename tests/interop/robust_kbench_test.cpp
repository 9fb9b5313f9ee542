// robust-kbench folders without Python: configurations (the multi_* product, shared keys
// overriding), the folders an argument names, and the reference text kevo writes.
#include "interop/robust_kbench.h"

#include <gtest/gtest.h>

#include <fstream>

#include "support/temp_dir.h"

namespace kevo::interop {
namespace {

TEST(RobustKbench, ConfigsAreTheProductWithSharedOverriding) {
  auto c = parse_rkb_configs(R"({
    "single_input_configs": [{"batch_size": 4}], "single_init_configs": [{"init_method": "random"}],
    "single_shared_configs": [{"n": 8, "batch_size": 5}],
    "multi_input_configs": [{"batch_size": 1}, {"batch_size": 2}],
    "multi_init_configs": [{"init_method": "random"}, {"init_method": "standard"}],
    "multi_shared_configs": [{"n": 3}, {"n": 3}]})",
                             "c.json");
  ASSERT_TRUE(c) << c.error().message;
  ASSERT_NE(rkb_setting(c->main, "batch_size"), nullptr);
  EXPECT_EQ(*rkb_setting(c->main, "batch_size"), 5) << "shared keys override input keys";
  EXPECT_EQ(*rkb_setting(c->main, "init_method"), "random");
  ASSERT_EQ(c->multi.size(), 4u) << "2 x 2 x 2 with the repeated shared entry removed";
  EXPECT_EQ(*rkb_setting(c->multi[0], "batch_size"), 1);
  EXPECT_EQ(*rkb_setting(c->multi[1], "init_method"), "standard");
  EXPECT_EQ(*rkb_setting(c->multi[3], "batch_size"), 2);
  EXPECT_EQ(rkb_setting(c->multi[0], "missing"), nullptr);
}

TEST(RobustKbench, MissingListsAreOneEmptyConfig) {
  auto c = parse_rkb_configs(R"({"single_input_configs": [{"n": 7}]})", "c.json");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->main.size(), 1u);
  ASSERT_EQ(c->multi.size(), 1u);
  EXPECT_TRUE(c->multi[0].empty());
}

TEST(RobustKbench, BadConfigsNameTheFileListAndEntry) {
  struct Case {
    const char* json;
    const char* says;
  };
  for (const Case& k : {Case{"{", "c.json: not valid JSON"}, Case{"[]", "must hold a JSON object"},
                        Case{R"({"multi_init_configs": 3})", "'multi_init_configs' must be a list"},
                        Case{R"({"multi_input_configs": [{"n": 1}, 2]})", "multi_input_configs[1]: must be a JSON object"},
                        Case{R"({"single_shared_configs": [{"n": [1, 2]}]})", "setting 'n' must be a number"},
                        Case{R"({"single_shared_configs": [{"a b": 1}]})", "setting 'a b' is not a usable"},
                        Case{R"({"single_shared_configs": [{"Model": 1}]})", "setting 'Model' is not a usable"},
                        Case{R"({"single_shared_configs": [{"class": 1}]})", "setting 'class' is not a usable"}}) {
    auto c = parse_rkb_configs(k.json, "c.json");
    ASSERT_FALSE(c) << k.json;
    EXPECT_NE(c.error().message.find(k.says), std::string::npos) << c.error().message;
    EXPECT_EQ(c.error().message.rfind("c.json", 0), 0u) << c.error().message;
    EXPECT_EQ(c.error().code, ErrorCode::kParse) << c.error().message;
  }
}

TEST(RobustKbench, FoldersAreTaskFoldersOrFoldersOfThem) {
  test::TempDir tmp("kevo-rkb");
  for (const char* t : {"b_task", "a_task"}) {
    std::filesystem::create_directories(tmp.path / "root" / t);
    std::ofstream(tmp.path / "root" / t / "func_forward.py") << "class Model: pass\ndef get_inputs(): pass\n";
  }
  std::filesystem::create_directories(tmp.path / "root" / "not_a_task");
  auto all = robust_kbench_folders({(tmp.path / "root").string()});
  ASSERT_TRUE(all) << all.error().message;
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ(all->front().filename(), "a_task");
  auto one = robust_kbench_folders({(tmp.path / "root" / "b_task").string()});
  ASSERT_TRUE(one);
  EXPECT_EQ(one->size(), 1u);
  auto none = robust_kbench_folders({(tmp.path / "root" / "not_a_task").string()});
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("holds no robust-kbench task folder"), std::string::npos);
  auto nope = robust_kbench_folders({(tmp.path / "nope").string()});
  ASSERT_FALSE(nope);
  EXPECT_EQ(nope.error().code, ErrorCode::kNotFound) << nope.error().message;
  auto bad = read_robust_kbench(tmp.path / "root" / "a_task");
  ASSERT_FALSE(bad) << "no config_forward.json";
  EXPECT_NE(bad.error().message.find("config_forward.json"), std::string::npos) << bad.error().message;
  EXPECT_EQ(bad.error().code, ErrorCode::kNotFound) << bad.error().message;
  std::ofstream(tmp.path / "root" / "b_task" / "func_forward.py") << "def get_inputs(): pass\n";
  auto no_model = read_robust_kbench(tmp.path / "root" / "b_task");
  ASSERT_FALSE(no_model);
  EXPECT_EQ(no_model.error().code, ErrorCode::kParse) << no_model.error().message;
}

TEST(RobustKbench, ReferenceKeepsTheSourceAndBindsTheSettings) {
  RkbSettings s{{"batch_size", 16}, {"init_method", "kaiming"}, {"eps", 1e-8}, {"flag", true}};
  std::string src = rkb_reference_source("class Model: pass\ndef get_inputs(): pass", s, "test");
  EXPECT_EQ(src.rfind("class Model: pass\ndef get_inputs(): pass\n", 0), 0u) << "the source comes first, unchanged";
  EXPECT_NE(src.find("\nbatch_size = 16\n"), std::string::npos);
  EXPECT_NE(src.find("\ninit_method = \"kaiming\"\n"), std::string::npos);
  EXPECT_NE(src.find("\nflag = True\n"), std::string::npos);
  EXPECT_NE(src.find("def get_init_inputs():"), std::string::npos);
  // A folder name is pasted into a comment: a line break in it must not start a line of code.
  std::string hostile = rkb_reference_source("class Model: pass", s, "robust-kbench a\nimport os\r\nos.system('x')");
  EXPECT_EQ(hostile.find("\nimport os"), std::string::npos) << hostile;
  EXPECT_EQ(hostile.find("\nos.system"), std::string::npos) << hostile;
  std::string b = rkb_backward_source(src, {{"x", "t"}, {"grad_out"}});
  EXPECT_NE(b.find("def _kevo_backward(self, x, t, grad_out):"), std::string::npos) << b;
  EXPECT_NE(b.find("_kevo_gradients(self, [x, t, ], [grad_out, ])"), std::string::npos) << b;
}

}  // namespace
}  // namespace kevo::interop
