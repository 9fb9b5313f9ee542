// Prompt templates and presets, without the loop: what each operator and information source
// puts into the text, and that held-out configurations cannot get in.
#include <gtest/gtest.h>

#include "evolve/prompts.h"
#include "evolve/strategy.h"
#include "evolve/task_context.h"
#include "harness.h"

namespace kevo::evolve {
namespace {

using namespace testing;

struct Fixture {
  Fixture() : dir(temp_dir("prompts")), task(make_task(dir)) {
    MarkerEvaluator ev;
    Verdict base = ev.evaluate_baseline(task, {});
    ctx = make_task_context(task, base, "CUDA 12.4", load_abi_text());
  }
  ~Fixture() { std::filesystem::remove_all(dir); }
  std::filesystem::path dir;
  Task task;
  TaskContext ctx;
};

SolutionView sol(int64_t id, double speedup) {
  return {id, "sol" + std::to_string(id), "rationale " + std::to_string(id),
          "// source of " + std::to_string(id) + "\n", speedup, 2.0 / speedup};
}

TEST(TaskContext, HoldsVisibleShapesOnly) {
  Fixture f;
  ASSERT_EQ(f.ctx.shapes.size(), 3u);
  for (const auto& s : f.ctx.shapes) {
    EXPECT_FALSE(contains(s, kHeldName));
    EXPECT_FALSE(contains(s, kHeldValue));
  }
  EXPECT_EQ(f.ctx.shapes[0], "main (timed): N=1048576");
  EXPECT_DOUBLE_EQ(f.ctx.baseline_ms, 2.0);
  EXPECT_TRUE(contains(f.ctx.abi_text, "kevo_forward"));
  EXPECT_EQ(scrub_held_out("config 'secret_holdout' failed", f.task), "config '<held-out>' failed");
}

// A backward task's signature says what is saved, what comes in and which gradients to produce;
// a forward task's says nothing of it.
TEST(TaskContext, BackwardTasksNameSavedTensorsAndGradients) {
  Fixture f;
  EXPECT_FALSE(contains(f.ctx.signature, "backward pass"));
  Task bwd = f.task;
  bwd.backward = BackwardSpec{"vec_forward", {"x"}, {{"y_saved", "y"}}, {{"dy", "y"}}, {{"dx", "x", "N"}}};
  MarkerEvaluator ev;
  TaskContext c = make_task_context(bwd, ev.evaluate_baseline(bwd, {}), "CUDA 12.4", "");
  EXPECT_TRUE(contains(c.signature, "backward pass of the forward task 'vec_forward'"))
      << c.signature;
  EXPECT_TRUE(contains(c.signature, "saved (the forward's inputs; recompute anything else you need "
                                    "from them): x"))
      << c.signature;
  EXPECT_TRUE(contains(c.signature, "incoming gradient: dy = dloss/dy (the forward's output y)"));
  EXPECT_TRUE(contains(c.signature, "saved output: y_saved = the forward's output y (read it; do not recompute it)"))
      << c.signature;
  EXPECT_TRUE(contains(c.signature, "produce: dx = dloss/dx (each element sums N terms)"));
}

TEST(Prompts, EveryOperatorOfEveryPresetKeepsHeldOutOut) {
  Fixture f;
  for (const auto& name : preset_names()) {
    auto s = preset(name);
    ASSERT_TRUE(s);
    for (Op op : {Op::kInit, Op::kMutate, Op::kCrossover, Op::kRewrite, Op::kDiffEdit, Op::kRepair}) {
      PromptInput in{op, &f.ctx, {sol(1, 1.5), sol(2, 1.2)}, {{3, "n", "tiling", store::CandidateOutcome::kPass, 1.1}},
                     "// failed\n", "error: x"};
      Prompt p = build_prompt(*s, in);
      std::string all = p.system + p.user;
      EXPECT_FALSE(contains(all, kHeldName)) << name << " " << to_string(op);
      EXPECT_FALSE(contains(all, kHeldValue)) << name << " " << to_string(op);
      EXPECT_TRUE(contains(all, "## Task: vec_scale"));
    }
  }
}

TEST(Prompts, InformationSourcesSwitchSections) {
  Fixture f;
  PromptInput in{Op::kMutate, &f.ctx, {sol(1, 1.5), sol(2, 1.2)},
                 {{3, "n3", "used tiling", store::CandidateOutcome::kPass, 1.1}}, "", ""};
  StrategyConfig s = *preset("evoengineer-full");
  auto full = build_prompt(s, in).user;
  EXPECT_TRUE(contains(full, "speedup over the baseline: 1.500x"));
  EXPECT_TRUE(contains(full, "used tiling -> 1.100x"));
  EXPECT_TRUE(contains(full, "idea: rationale 1"));
  EXPECT_TRUE(contains(full, "// source of 1"));
  EXPECT_TRUE(contains(full, "// source of 2"));
  s.info.insights = false;
  auto no_i3 = build_prompt(s, in).user;
  EXPECT_FALSE(contains(no_i3, "used tiling"));
  EXPECT_FALSE(contains(no_i3, "idea: rationale 1"));
  s.info.solutions = false;
  auto no_i2 = build_prompt(s, in).user;
  EXPECT_FALSE(contains(no_i2, "speedup over the baseline"));
  EXPECT_TRUE(contains(no_i2, "// source of 1"));  // the operator's own input is always shown
  s.info.task = false;
  auto no_i1 = build_prompt(s, in).user;
  EXPECT_FALSE(contains(no_i1, "Fake H100"));
  EXPECT_FALSE(contains(no_i1, "Shapes it is checked on"));
  EXPECT_TRUE(contains(no_i1, "kevo_forward"));  // the contract stays
}

TEST(Prompts, ProfileDiagnosisGoesNextToTheSpeedupUnlessSwitchedOff) {
  Fixture f;
  f.ctx.baseline_diagnosis = "memory-bound: DRAM 41% of peak";
  SolutionView parent = sol(1, 1.5);
  parent.diagnosis = "compute-bound: SM 75% of peak; top stalls: barrier 6.5 cycles/issue";
  PromptInput in{Op::kMutate, &f.ctx, {parent, sol(2, 1.2)}, {}, "", ""};
  StrategyConfig s = *preset("evoengineer-full");
  auto with = build_prompt(s, in).user;
  EXPECT_TRUE(contains(with, "speedup over the baseline: 1.500x (1.333 ms)\nprofile: compute-bound: SM 75% of peak; "
                             "top stalls: barrier 6.5 cycles/issue\n"));
  EXPECT_EQ(with.find("profile: "), with.rfind("profile: "));  // the second parent has none
  in.op = Op::kInit;
  EXPECT_TRUE(contains(build_prompt(s, in).user, "on the timed shape.\nProfile: memory-bound: DRAM 41% of peak"));
  in.op = Op::kMutate;
  s.profile_feedback = false;
  auto without = build_prompt(s, in).user;
  EXPECT_FALSE(contains(without, "profile: "));
  // Its cost: the diagnosis and its label, nothing else.
  EXPECT_EQ(with.size() - without.size(), std::string("profile: \n").size() + parent.diagnosis.size());
}

TEST(Prompts, RepairShowsTheFailureAndNotTheBaseline) {
  Fixture f;
  PromptInput in{Op::kRepair, &f.ctx, {}, {}, "__global__ void broken() {}\n", "error: expected ';'"};
  auto p = build_prompt(*preset("kevo-default"), in).user;
  EXPECT_TRUE(contains(p, "__global__ void broken()"));
  EXPECT_TRUE(contains(p, "error: expected ';'"));
  EXPECT_FALSE(contains(p, "Baseline implementation"));
}

TEST(Strategy, PresetsHaveThePublishedDefaultsAndRoundTrip) {
  for (const auto& name : preset_names()) {
    auto s = preset(name);
    ASSERT_TRUE(s) << name;
    EXPECT_EQ(s->max_candidates, 45);
    EXPECT_EQ(s->parallel, 4);
    EXPECT_EQ(s->population.size, 5);
    auto back = StrategyConfig::from_json(s->to_json());
    ASSERT_TRUE(back);
    EXPECT_EQ(back->to_json(), s->to_json());
  }
  EXPECT_EQ(preset("kevo-default")->population.kind, PolicyKind::kMapElites);
  EXPECT_EQ(preset("kevo-default")->repair_rounds, 2);
  EXPECT_EQ(preset("evoengineer-free")->population.kind, PolicyKind::kSingleBest);
  EXPECT_EQ(preset("funsearch")->population.kind, PolicyKind::kIslands);
  EXPECT_FALSE(preset("nope"));
}

TEST(Strategy, EvolveTableOverridesThePreset) {
  auto s = parse_strategy_toml(R"(
[llm]
models = ["fake:m1"]
[evolve]
strategy = "eoh"
parallel = 2
policy = "islands"
islands = 3
info = ["task", "insights"]
operators = { mutate = 1.0, diff_edit = 3.0 }
repair_rounds = 1
)", *preset("kevo-default"));
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->name, "eoh");
  EXPECT_EQ(s->parallel, 2);
  EXPECT_EQ(s->population.kind, PolicyKind::kIslands);
  EXPECT_EQ(s->population.islands, 3);
  EXPECT_FALSE(s->info.solutions);
  EXPECT_TRUE(s->info.insights);
  EXPECT_EQ(s->operators.size(), 2u);
  EXPECT_EQ(s->repair_rounds, 1);
  EXPECT_TRUE(s->profile_feedback);
  auto off = parse_strategy_toml("[evolve]\nprofile_feedback = false\n", *preset("eoh"));
  ASSERT_TRUE(off) << off.error().message;
  EXPECT_FALSE(off->profile_feedback);
  EXPECT_FALSE(StrategyConfig::from_json(off->to_json())->profile_feedback);
  auto wrong = parse_strategy_toml("[evolve]\nprofile_feedback = 1\n", *preset("eoh"));
  ASSERT_FALSE(wrong);
  EXPECT_TRUE(contains(wrong.error().message, "profile_feedback must be true or false"));
  auto bad = parse_strategy_toml("[evolve]\nparalel = 2\n", *preset("eoh"));
  ASSERT_FALSE(bad);
  EXPECT_TRUE(contains(bad.error().message, "line 2"));
  EXPECT_TRUE(contains(bad.error().message, "paralel"));
}

}  // namespace
}  // namespace kevo::evolve
