// Model selection: weights, the bandits' learning, visible shares, disabling broken models.
#include <gtest/gtest.h>

#include "llm/ensemble.h"
#include "llm/errors.h"

namespace kevo::llm {
namespace {

class StubClient final : public LlmClient {
 public:
  explicit StubClient(std::string name, bool fatal = false) : name_(std::move(name)), fatal_(fatal) {}
  Result<ChatResponse> chat(const ChatRequest&, const CancelToken&) override {
    ++calls;
    if (fatal_) return make_error(ErrorKind::kFatal, name_ + ": bad key");
    ChatResponse r;
    r.model = name_;
    r.text = "answer from " + name_;
    return r;
  }
  const std::string& name() const override { return name_; }
  int calls = 0;

 private:
  std::string name_;
  bool fatal_;
};

std::unique_ptr<Ensemble> make(Selection s, std::vector<double> weights, bool b_fatal = false) {
  std::vector<std::unique_ptr<LlmClient>> m;
  m.push_back(std::make_unique<StubClient>("a:good"));
  m.push_back(std::make_unique<StubClient>("b:poor", b_fatal));
  return std::make_unique<Ensemble>(std::move(m), std::move(weights), s, 1234);
}

TEST(Ensemble, WeightedSharesFollowWeights) {
  auto e = make(Selection::kWeighted, {3, 1});
  CancelToken cancel;
  for (int i = 0; i < 4000; ++i) ASSERT_TRUE(e->chat(ChatRequest::user("x"), cancel));
  auto s = e->stats();
  EXPECT_NEAR(s[0].share, 0.75, 0.03);
  EXPECT_NEAR(s[1].share, 0.25, 0.03);
  EXPECT_NEAR(s[0].probability, 0.75, 1e-9);
  EXPECT_EQ(s[0].picks + s[1].picks, 4000);
}

TEST(Ensemble, ZeroWeightExcludes) {
  auto e = make(Selection::kThompson, {1, 0});
  CancelToken cancel;
  for (int i = 0; i < 50; ++i) ASSERT_EQ(e->chat(ChatRequest::user("x"), cancel)->model, "a:good");
}

void learns(Selection sel) {
  auto e = make(sel, {});
  CancelToken cancel;
  std::mt19937 rng(5);
  std::bernoulli_distribution good(0.7), poor(0.1);
  for (int i = 0; i < 600; ++i) {
    auto r = e->chat(ChatRequest::user("x"), cancel);
    ASSERT_TRUE(r);
    e->reward(r->model, r->model == "a:good" ? good(rng) : poor(rng));
  }
  auto s = e->stats();
  EXPECT_GT(s[0].share, 0.75) << e->summary();
  EXPECT_GT(s[1].picks, 5) << "the other model was still explored";
  EXPECT_NEAR(s[0].mean_reward(), 0.7, 0.1);
  EXPECT_GT(s[0].probability, s[1].probability);
  EXPECT_NE(e->summary().find("a:good"), std::string::npos);
}

TEST(Ensemble, ThompsonSamplingLearnsTheBetterModel) { learns(Selection::kThompson); }
TEST(Ensemble, UcbLearnsTheBetterModel) { learns(Selection::kUcb); }

TEST(Ensemble, FatalErrorDisablesThatModel) {
  auto e = make(Selection::kWeighted, {1, 1}, /*b_fatal=*/true);
  CancelToken cancel;
  int failures = 0;
  for (int i = 0; i < 100; ++i)
    if (!e->chat(ChatRequest::user("x"), cancel)) ++failures;
  EXPECT_EQ(failures, 1) << "after one fatal answer the model is not chosen again";
  auto s = e->stats();
  EXPECT_TRUE(s[1].disabled);
  EXPECT_NE(s[1].disabled_reason.find("bad key"), std::string::npos);
  EXPECT_EQ(s[1].probability, 0);
}

TEST(Ensemble, FromConfig) {
  LlmConfig cfg = default_config();
  cfg.models = {"http://127.0.0.1:9/v1#a", "http://127.0.0.1:9/v1#b"};
  cfg.weights = {1};
  auto bad = make_ensemble(make_context(cfg));
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("weights"), std::string::npos);
  cfg.weights = {1, 2};
  auto ok = make_ensemble(make_context(cfg));
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ((*ok)->size(), 2u);
  cfg.models.clear();
  EXPECT_FALSE(make_ensemble(make_context(cfg)));
}

}  // namespace
}  // namespace kevo::llm
