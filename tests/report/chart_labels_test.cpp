// The charts' labels stay inside their SVG's viewBox for long values: huge speedups, long strategy
// and model names, large candidate counts and ids, long candidate names.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "report/charts.h"
#include "report/svg_bounds.h"
#include "report/svg_text.h"

namespace kevo::report {
namespace {

using testing::svg_texts;
using testing::svg_texts_outside;

const std::string kLong = "a-strategy-with-a-long-name / openai:a-very-long-model-name-from-a-local-server-2026";

store::CandidateRow candidate(int64_t id, int seq, double speedup) {
  store::CandidateRow c;
  c.id = id;
  c.seq = seq;
  c.op = "crossover";
  c.parents = {id - 1, id - 2};
  c.outcome = store::CandidateOutcome::kPass;
  c.speedup = c.speedup_lo = c.speedup_hi = speedup;
  c.name = "WIDE_MMMM_WWWW_NAME_OF_THE_IDEA";
  return c;
}

std::vector<TableData> tables() {
  TableData d;
  d.table.key = {kLong, "", true};
  results::TaskResult t;
  t.task = "task";
  t.speedup = 123456.789;
  d.table.tasks = {t};
  d.table.agg.tasks = 1234567;
  d.table.agg.correct = 1234567;
  d.table.agg.median = 123456.789;
  d.table.agg.candidates = 123456789;
  d.table.agg.compiled = d.table.agg.valid = 123456789;
  d.table.agg.compile_rate = d.table.agg.validity_rate = 1.0;
  return {d, d};
}

TEST(ChartLabels, BestSoFarFitsAHugeSpeedupAndShortensALongTitle) {
  std::vector<store::CandidateRow> cands = {candidate(1000001, 1, 1.5), candidate(1000002, 2, 98765.4321)};
  const std::string svg = best_so_far_chart("a_task_name_far_too_long_for_the_card_it_heads_MMMMWWWW", cands, 98765.4321);
  EXPECT_EQ(svg_texts_outside(svg), "") << svg;
  bool shortened = false;
  for (const auto& t : svg_texts(svg)) shortened |= t.text.ends_with("...");
  EXPECT_TRUE(shortened) << svg;
  EXPECT_NE(svg.find("<title>a_task_name_far_too_long_for_the_card_it_heads_MMMMWWWW</title>"), std::string::npos);
}

TEST(ChartLabels, DistributionAndRatesFitLongLabelsAndLargeCounts) {
  const auto data = tables();
  const std::string dist = distribution_chart(data), rates = rates_chart(data);
  EXPECT_EQ(svg_texts_outside(dist), "") << dist;
  EXPECT_EQ(svg_texts_outside(rates), "") << rates;
  EXPECT_NE(rates.find("(123456789/123456789)"), std::string::npos);
}

TEST(ChartLabels, LineageBoxesHoldTheirLabels) {
  std::vector<store::CandidateRow> cands = {candidate(1000003, 3, 1.5), candidate(1000004, 4, 2.5)};
  const std::vector<const store::CandidateRow*> chain = {&cands[1], &cands[0]};  // winner first
  const std::string svg = lineage_svg(chain);
  EXPECT_EQ(svg_texts_outside(svg), "") << svg;
  EXPECT_NE(svg.find("#1000004 (seq 4) crossover (+#1000002)"), std::string::npos) << svg;
}

TEST(ChartLabels, ShortLabelsKeepTheChartsTheirUsualSize) {
  TableData d;
  d.table.key = {"kevo-default", "fake:m1", false};
  d.table.agg.compile_rate = 0.5;
  EXPECT_NE(rates_chart({d}).find(R"(width="900.00")"), std::string::npos) << rates_chart({d});
  EXPECT_NE(distribution_chart({d}).find(R"(width="900.00")"), std::string::npos);
}

TEST(SvgText, WidthGrowsWithTheTextAndFitTextCutsToTheRoom) {
  EXPECT_EQ(text_width("", 12), 0);
  EXPECT_GT(text_width("MMMM", 12), text_width("iiii", 12));
  EXPECT_DOUBLE_EQ(text_width("ab", 20), 2 * text_width("ab", 10));
  EXPECT_EQ(text_width("é", 10), text_width("\xe4\xb8\xad", 10));  // a character, whatever its bytes
  EXPECT_EQ(fit_text("short", 12, 100), "short");
  const std::string cut = fit_text(std::string(100, 'a'), 12, 100);
  EXPECT_TRUE(cut.ends_with("...")) << cut;
  EXPECT_LE(text_width(cut, 12), 100);
  EXPECT_EQ(fit_text("\xe4\xb8\xad\xe4\xb8\xad\xe4\xb8\xad\xe4\xb8\xad", 10, 30), "\xe4\xb8\xad...");  // never half a character
}

}  // namespace
}  // namespace kevo::report
