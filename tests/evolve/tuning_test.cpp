// Offline tuning: the annotation, the variants it enumerates, and the engine run with no model.
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "evolve/tuning.h"
#include "harness.h"
#include "util/fs.h"

namespace kevo::evolve {
namespace {

using namespace testing;

constexpr const char* kTunable =
    "#include <kevo/kernel.h>\n"
    "#define BLOCK 256  // kevo: tune BLOCK in {128, 256, 512}\n"
    "// kevo: tune kItems in {1, 2, 4}\n"
    "constexpr int kItems = 4;\n"
    "__global__ void k() {}\n";

TEST(Tuning, FindsAnnotations) {
  auto t = find_tunables(kTunable);
  ASSERT_TRUE(t) << t.error().message;
  ASSERT_EQ(t->size(), 2u);
  EXPECT_EQ((*t)[0].name, "BLOCK");
  EXPECT_EQ((*t)[0].current, "256");
  EXPECT_EQ((*t)[0].line, 2);
  EXPECT_EQ((*t)[0].values, (std::vector<std::string>{"128", "256", "512"}));
  EXPECT_EQ((*t)[1].name, "kItems");
  EXPECT_EQ((*t)[1].line, 4);
  EXPECT_EQ((*t)[1].current, "4");
}

TEST(Tuning, EnumeratesEveryCombinationCurrentFirst) {
  auto v = enumerate_variants(kTunable, 100);
  ASSERT_TRUE(v) << v.error().message;
  ASSERT_EQ(v->size(), 9u);
  EXPECT_EQ(v->front().source, kTunable);  // the source as written comes first
  std::set<std::string> labels;
  for (const auto& x : *v) {
    labels.insert(x.label());
    std::smatch m;
    std::string s = x.source;
    ASSERT_TRUE(std::regex_search(s, m, std::regex(R"(#define BLOCK (\d+)  // kevo: tune BLOCK in \{128, 256, 512\})")));
    ASSERT_TRUE(std::regex_search(s, m, std::regex(R"(constexpr int kItems = (\d+);)")));
  }
  EXPECT_EQ(labels.size(), 9u);
  EXPECT_TRUE(labels.count("BLOCK=512 kItems=1"));
  EXPECT_TRUE(labels.count("BLOCK=128 kItems=2"));
  auto capped = enumerate_variants(kTunable, 4);
  ASSERT_TRUE(capped);
  EXPECT_EQ(capped->size(), 4u);
}

TEST(Tuning, ErrorsNameTheLine) {
  auto bad = find_tunables("int x;\n// kevo: tune BLOCK in 128, 256\n#define BLOCK 1\n");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("line 2"), std::string::npos);
  auto orphan = find_tunables("// kevo: tune BLOCK in {1, 2}\nint y;\n");
  ASSERT_FALSE(orphan);
  EXPECT_NE(orphan.error().message.find("no '#define BLOCK"), std::string::npos);
}

// Times a variant by its constants: BLOCK=512, kItems=2 is fastest.
class TunedTimes final : public CandidateEvaluator {
 public:
  Verdict evaluate(const Task& task, const std::filesystem::path& file, const EvalOptions& o) override {
    auto src = read_file(file);
    std::smatch m;
    std::string s = *src;
    std::regex_search(s, m, std::regex(R"(#define BLOCK (\d+))"));
    int block = std::stoi(m[1]);
    std::regex_search(s, m, std::regex(R"(kItems = (\d+))"));
    int items = std::stoi(m[1]);
    seen.insert(std::to_string(block) + "/" + std::to_string(items));
    double ms = 2.0 - block / 1000.0 - (items == 2 ? 0.3 : 0.0);
    std::string marked = "// fake: pass time_ms=" + std::to_string(ms) + " noise=0.01\n" + s;
    return inner.judge(task, marked, o);
  }
  Verdict evaluate_baseline(const Task& t, const EvalOptions& o) override { return inner.evaluate_baseline(t, o); }
  MarkerEvaluator inner;
  std::set<std::string> seen;
};

TEST(Tuning, EngineWithoutModelSearchesTheAnnotatedValues) {
  Harness h([](const std::string&, int) { return std::string("unused"); }, kTunable);
  TunedTimes ev;
  Engine e(h.task, ev, *h.db, nullptr, nullptr, h.cancel);
  auto o = h.options("kevo-default", 45);
  auto out = e.start(o);
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(out->candidates, 9);
  EXPECT_EQ(ev.seen.size(), 9u);
  EXPECT_EQ(ev.seen, (std::set<std::string>{"128/1", "128/2", "128/4", "256/1", "256/2", "256/4", "512/1",
                                            "512/2", "512/4"}));
  EXPECT_TRUE(h.server.prompts().empty());  // no model was asked
  ASSERT_NE(out->winner, 0);
  auto c = h.db->candidate(out->winner);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->name, "BLOCK=512 kItems=2");
  EXPECT_EQ(c->op, "tune");
  EXPECT_NE(out->note.find("No LLM configured"), std::string::npos);
  EXPECT_NE(out->note.find("--model"), std::string::npos);
  EXPECT_EQ(h.db->get_run(out->run_id)->strategy, "offline-tuning");
}

TEST(Tuning, EngineWithoutModelOrAnnotationsSaysSo) {
  Harness h([](const std::string&, int) { return std::string("unused"); });
  auto out = h.run(h.options("kevo-default", 45), /*with_llm=*/false);
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(out->candidates, 0);
  EXPECT_EQ(out->stop_reason, "nothing_to_tune");
  EXPECT_NE(out->note.find("marks no tunable constants"), std::string::npos);
  EXPECT_NE(out->note.find("docs/LLM.md"), std::string::npos);
}

}  // namespace
}  // namespace kevo::evolve
