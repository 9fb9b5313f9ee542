// The run page's charts keep their labels inside the SVG's viewBox for long values: a long worker
// name, a long strategy and model, many candidates.
#include <gtest/gtest.h>

#include <string>

#include "report/svg_bounds.h"
#include "serve/activity.h"
#include "serve/run_charts.h"

namespace kevo::serve {
namespace {

RunData long_run() {
  RunData d;
  d.run.id = 1;
  d.run.task = "a_task_name_far_too_long_for_the_card_it_heads_MMMMWWWW";
  d.run.strategy = "a-strategy-with-a-long-name-MMMMWWWW";
  d.run.config_json = R"({"llm": "openai:a-very-long-model-name-from-a-local-server-2026-MMMMWWWW"})";
  d.run.created_at = 1000;
  d.run.updated_at = 2000;
  d.run.status = store::RunStatus::kFinished;
  for (int i = 0; i < 3; ++i) {
    JobFacts j;
    j.worker = "a-build-host-with-a-long-name.example.org/gpu" + std::to_string(i) + "MMMMWWWW";
    j.finished_at = 1000 + 100 * i;
    j.state = store::JobState::kDone;
    for (int k = 0; k < 400; ++k) d.jobs.push_back(j);
  }
  for (int i = 1; i <= 3; ++i) {
    store::CandidateRow c;
    c.id = 1000000 + i;
    c.seq = i;
    c.outcome = store::CandidateOutcome::kPass;
    c.speedup = c.speedup_lo = c.speedup_hi = 98765.4321 * i;
    d.candidates.push_back(c);
    d.figures.emplace_back();
  }
  return d;
}

TEST(RunCharts, LabelsStayInsideTheViewBoxForLongValues) {
  const RunData d = long_run();
  for (const char* name : {"best.svg", "rates.svg", "activity.svg"}) {
    auto svg = run_chart(d, name, 2000);
    ASSERT_TRUE(svg) << name;
    EXPECT_EQ(testing::svg_texts_outside(*svg), "") << name << ":\n" << *svg;
  }
}

}  // namespace
}  // namespace kevo::serve
