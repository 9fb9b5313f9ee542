// A run's stored configuration is read back by `kevo evolve --resume`; a database another kevo or
// a hand edit wrote may hold fields of another type: the error names the run and the field.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "evolve/engine.h"

using namespace kevo;
using ::testing::HasSubstr;

namespace {
store::RunRow run_with(const std::string& config) {
  store::RunRow r;
  r.id = 7;
  r.task = "softmax";
  r.config_json = config;
  return r;
}
}  // namespace

TEST(StoredOptions, WhatWasStoredComesBack) {
  auto o = evolve::options_of_run(run_with(
      R"({"seed": 11, "eval_seeds": 4, "budgets": {"max_candidates": 9, "max_usd": 2.5},
          "strategy": {"name": "kevo-default", "population": 12}})"));
  ASSERT_TRUE(o) << o.error().message;
  EXPECT_EQ(o->seed, 11u);
  EXPECT_EQ(o->eval.seeds, 4);
  EXPECT_EQ(o->budgets.max_candidates, 9);
  ASSERT_TRUE(o->budgets.max_usd);
  EXPECT_DOUBLE_EQ(*o->budgets.max_usd, 2.5);
  EXPECT_FALSE(o->budgets.max_calls);
  EXPECT_EQ(o->strategy.population.size, 12);
}

TEST(StoredOptions, AFieldOfAnotherTypeIsNamedNotThrown) {
  struct Case {
    const char* config;
    const char* says;
  } cases[] = {
      {R"({"budgets": {"max_calls": "ten"}})", "run 7: stored configuration: budgets: field 'max_calls' is string"},
      {R"({"budgets": {"max_minutes": true}})", "budgets: field 'max_minutes' is boolean, expected a number"},
      {R"({"budgets": [1]})", "run 7: stored configuration: field 'budgets' is array, expected an object"},
      {R"({"strategy": {"population": "big"}})", "strategy: field 'population' is string, expected an integer"},
      {R"({"strategy": {"info": {"task": 1}}})", "strategy.info: field 'task' is number, expected true or false"},
      {R"({"strategy": {"operators": {"mutate": "x"}}})", "strategy.operators: field 'mutate' is string"},
      {R"({"seed": "s"})", "run 7: stored configuration: field 'seed' is string, expected an integer"},
      {R"([1, 2])", "run 7: its stored configuration is not a JSON object"},
      {"{", "run 7: its stored configuration is not a JSON object"},
  };
  for (const auto& c : cases) {
    auto o = evolve::options_of_run(run_with(c.config));
    ASSERT_FALSE(o) << c.config;
    EXPECT_THAT(o.error().message, HasSubstr(c.says)) << c.config;
  }
}
