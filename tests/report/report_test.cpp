// The HTML report: escaping, the line diff, and the report of a recorded run.
#include <gtest/gtest.h>

#include <unistd.h>

#include "evolve/task_context.h"
#include "fixture.h"
#include "report/html.h"
#include "report/report.h"
#include "support/temp_dir.h"

namespace kevo::report {
namespace {

TEST(Escape, NeutralisesMarkup) {
  EXPECT_EQ(escape("<a href=\"x\">'&'</a>"), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  EXPECT_EQ(escape("plain"), "plain");
}

TEST(LineDiff, SameAddedRemoved) {
  auto d = line_diff("a\nb\nc\n", "a\nx\nc\nd\n");
  ASSERT_EQ(d.size(), 5u);
  EXPECT_EQ(d[0].op, DiffOp::kSame);
  EXPECT_EQ(d[1].op, DiffOp::kRemoved);
  EXPECT_EQ(d[1].text, "b");
  EXPECT_EQ(d[1].left, 2);
  EXPECT_EQ(d[2].op, DiffOp::kAdded);
  EXPECT_EQ(d[2].text, "x");
  EXPECT_EQ(d[2].right, 2);
  EXPECT_EQ(d[3].op, DiffOp::kSame);
  EXPECT_EQ(d[4].op, DiffOp::kAdded);
  EXPECT_EQ(d[4].text, "d");
  EXPECT_TRUE(line_diff("", "").empty());
  auto big = line_diff("a\nb\n", "c\n", 2);  // over the cell cap: all removed, then all added
  ASSERT_EQ(big.size(), 3u);
  EXPECT_EQ(big[2].op, DiffOp::kAdded);
}

TEST(Report, RecordedRunShowsTheDatabaseFiguresAndEscapesSource) {
  kevo::test::TempDir dir("kevo-report-test");
  auto db = testing::write_fixture(dir.path);
  ASSERT_TRUE(db) << db.error().message;
  auto data = load_report_data({db->string()}, [](const std::string& v) { return evolve::profile_advice(v).diagnosis; });
  ASSERT_TRUE(data) << data.error().message;
  ASSERT_EQ(data->size(), 1u);
  std::string html = render_html(*data);
  for (const char* f : testing::kFixtureFigures) EXPECT_NE(html.find(f), std::string::npos) << f;
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("FAKE GPU"), std::string::npos);
  // Self-contained: nothing is fetched.
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);  // the candidate's markup is escaped
  EXPECT_NE(html.find("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"), std::string::npos);
  // The lineage of alpha's winner and its diff against the baseline; candidates named by id and by
  // their place in their run (gamma's one candidate is the database's 6th).
  EXPECT_NE(html.find("#2 (seq 2) init"), std::string::npos);
  EXPECT_NE(html.find("#4 (seq 4) mutate"), std::string::npos);
  EXPECT_NE(html.find("<td>winner #4 (seq 4)</td>"), std::string::npos);
  EXPECT_NE(html.find("<b>gamma</b>: #6 (seq 1)"), std::string::npos);
  EXPECT_NE(html.find("// faster: vectorized"), std::string::npos);
  EXPECT_NE(html.find("0 lines removed, 1 added"), std::string::npos);
  // The winner's profile, read by rule, and the LLM verifier's matrix of alpha's run.
  EXPECT_NE(html.find("profile (Nsight Compute, advice only): memory-bound: DRAM 82% of peak"), std::string::npos);
  EXPECT_NE(html.find("<caption>alpha (run 1, fake:verifier)</caption>"), std::string::npos) << html;
  for (const char* cell : {"TP 1", "FP 1", "FN 1", "TN 1", "precision 0.50, recall 0.50; 4 calls, 100 tokens, $0.0040"})
    EXPECT_NE(html.find(cell), std::string::npos) << cell;
  EXPECT_EQ(html.find("(run 2, fake:verifier)"), std::string::npos);  // beta had no verifier
  // gamma's winner came from an agent episode: its accounting and its turns, inside the lineage.
  EXPECT_NE(html.find("from agent episode 7 (fake:m1): submitted, 2 turn(s), 1000 tokens"), std::string::npos) << html;
  EXPECT_NE(html.find("<td>evaluate</td><td>#6 (seq 1) pass 1.600x</td>"), std::string::npos);
  EXPECT_EQ(html.find("agent episode(s)"), html.rfind("agent episode(s)")) << "only gamma's run had episodes";
  // The database by its file name: the folder it was in (a home folder) does not travel with it.
  EXPECT_EQ(html.find(dir.path.string()), std::string::npos) << "the report names " << dir.path;
  EXPECT_NE(html.find("database " + db->filename().string()), std::string::npos);
}

}  // namespace
}  // namespace kevo::report
