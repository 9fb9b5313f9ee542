// `kevo recheck`: the claims TSV and the mapping of solutions to problems (no Python), the results
// file's rows, and a recheck end to end through the bridge with the fake evaluator: verdicts,
// totals, a bad solution and an unmapped one as rows, and a rerun that reuses what was done.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "interop/recheck.h"
#include "test_support.h"
#include "util/fs.h"

namespace kevo::interop {
namespace {

using testing::data;
using testing::TempDir;

void put(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  ASSERT_TRUE(write_file_atomic(p, text));
}

TEST(RecheckPlan, ClaimsErrorsNameTheFileLineAndColumn) {
  TempDir tmp;
  put(tmp.path / "a.tsv", "file\tspeedup\n");
  auto a = read_claims(tmp.path / "a.tsv");
  ASSERT_FALSE(a);
  EXPECT_NE(a.error().message.find("a.tsv:1: no column 'claimed_speedup'"), std::string::npos) << a.error().message;
  put(tmp.path / "b.tsv", "file\tclaimed_speedup\tproblem_id\nx.py\t2.5\t3\ny.py\tfast\t4\n");
  auto b = read_claims(tmp.path / "b.tsv");
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().message.find("b.tsv:3: column 'claimed_speedup': 'fast'"), std::string::npos) << b.error().message;
  put(tmp.path / "c.tsv", "file\tclaimed_speedup\tproblem_id\tgpu\nx.py\t2.5\t3\tA100\n");
  auto c = read_claims(tmp.path / "c.tsv");
  ASSERT_TRUE(c) << c.error().message;
  ASSERT_EQ(c->size(), 1u);
  EXPECT_EQ((*c)[0].problem_id, 3);
  EXPECT_DOUBLE_EQ((*c)[0].speedup, 2.5);
  EXPECT_EQ((*c)[0].gpu, "A100");
}

TEST(RecheckPlan, SolutionsMapToProblemsByClaimOrFileName) {
  EXPECT_EQ(problem_number_of("L1_019_19_ReLU.py"), 19);
  EXPECT_EQ(problem_number_of("23_Softmax.py"), 23);
  EXPECT_EQ(problem_number_of("relu.py"), std::nullopt);
  TempDir tmp;
  put(tmp.path / "problems" / "19_ReLU.py", "");
  put(tmp.path / "problems" / "L1_023.py", "");
  put(tmp.path / "sol" / "L1_019_relu.py", "");
  put(tmp.path / "sol" / "fast_softmax.py", "");  // no number: its claim row names problem 23
  put(tmp.path / "sol" / "42_missing.py", "");
  put(tmp.path / "claims.tsv", "file\tclaimed_speedup\tproblem_id\nsol/fast_softmax.py\t3\t23\n");
  auto claims = read_claims(tmp.path / "claims.tsv");
  ASSERT_TRUE(claims) << claims.error().message;
  auto plan = plan_recheck(tmp.path / "sol", tmp.path / "claims.tsv", *claims, tmp.path / "problems");
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_EQ(plan->size(), 3u);
  EXPECT_EQ((*plan)[0].problem->filename(), "19_ReLU.py");
  EXPECT_FALSE((*plan)[1].problem);
  EXPECT_NE((*plan)[1].problem_error.find("no problem file numbered 42"), std::string::npos);
  EXPECT_EQ((*plan)[2].problem->filename(), "L1_023.py");
  ASSERT_TRUE((*plan)[2].claim);
  put(tmp.path / "bad.tsv", "file\tclaimed_speedup\nsol/gone.py\t2\n");
  auto gone = plan_recheck(tmp.path / "sol", tmp.path / "bad.tsv", *read_claims(tmp.path / "bad.tsv"), tmp.path / "problems");
  ASSERT_FALSE(gone);
  EXPECT_NE(gone.error().message.find("'sol/gone.py': no such file"), std::string::npos) << gone.error().message;
}

TEST(RecheckResults, RowsRoundTripWithEscapes) {
  RecheckRow r;
  r.file = "a b.py";
  r.sha256 = "abc";
  r.evaluator = "fake";
  r.problem = "1_x.py";
  r.verdict = {SolutionOutcome::kFormat, "lazy\tresult\nline two \\ end", Speedup{2, 1.5, 2.5}, std::nullopt,
               LooseCheck::kPass};
  r.claimed = 24.9;
  r.seconds = 1.25;
  auto back = parse_result_line(result_line(r));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->verdict.reason, r.verdict.reason);
  EXPECT_EQ(back->verdict.outcome, SolutionOutcome::kFormat);
  ASSERT_TRUE(back->verdict.vs_eager);
  EXPECT_DOUBLE_EQ(back->verdict.vs_eager->low, 1.5);
  EXPECT_FALSE(back->verdict.vs_compile);
  EXPECT_EQ(back->verdict.kernelbench_allclose, LooseCheck::kPass);
  EXPECT_DOUBLE_EQ(*back->claimed, 24.9);
  EXPECT_FALSE(parse_result_line("too\tfew"));
}

const char* kSolution = "import torch\nimport torch.nn as nn\n\nclass ModelNew(nn.Module):\n"
                        "    def forward(self, x):\n        return x\n";

// Problems 1 (gelu) and 2 (softmax) from the import tests; four solutions.
void layout(const fs::path& root) {
  put(root / "problems" / "1_gelu.py", *read_file(data("kb_gelu.py")));
  put(root / "problems" / "2_softmax.py", *read_file(data("kb_softmax.py")));
  put(root / "sol" / "1_fast.py", std::string("# kevo-fake: outcome=pass eager=2.0:1.9:2.1 compile=1.1\n") + kSolution);
  put(root / "sol" / "2_lazy.py",
      std::string("# kevo-fake: outcome=format allclose=pass reason=lazy_result\n") + kSolution);
  put(root / "sol" / "2_broken.py", "def forward(x):\n    return x\n");
  put(root / "sol" / "9_nothing.py", kSolution);
  put(root / "claims.tsv", "file\tclaimed_speedup\nsol/1_fast.py\t2.1\nsol/2_lazy.py\t24.9\nsol/2_broken.py\t3\n");
}

RecheckOptions options_for(const fs::path& root) {
  RecheckOptions o;
  o.solutions = root / "sol";
  o.claims = root / "claims.tsv";
  o.problems = root / "problems";
  o.results = root / "out" / "results.tsv";
  o.tasks_dir = root / "out" / "tasks";
  fs::create_directories(o.tasks_dir);
  return o;
}

TEST(Recheck, FakeVerdictsTotalsAndARerunThatReusesThem) {
  KEVO_BRIDGE_OR_SKIP(b);
  TempDir tmp;
  layout(tmp.path);
  const RecheckOptions o = options_for(tmp.path);
  auto ev = fake_solution_evaluator();
  size_t calls = 0;
  auto rows = recheck(*ev, o, [&](size_t i, size_t n, const RecheckRow&, bool reused) {
    EXPECT_EQ(i, ++calls);
    EXPECT_EQ(n, 4u);
    EXPECT_FALSE(reused);
  });
  ASSERT_TRUE(rows) << rows.error().message;
  ASSERT_EQ(rows->size(), 4u);
  EXPECT_EQ((*rows)[0].verdict.outcome, SolutionOutcome::kPass);
  EXPECT_TRUE(claim_holds((*rows)[0]));  // 2.0x against a claimed 2.1x: within 10%
  EXPECT_EQ((*rows)[1].verdict.outcome, SolutionOutcome::kBadSolution);
  EXPECT_NE((*rows)[1].verdict.reason.find("2_broken.py: defines no class ModelNew"), std::string::npos)
      << (*rows)[1].verdict.reason;
  EXPECT_EQ((*rows)[2].verdict.outcome, SolutionOutcome::kFormat);
  EXPECT_EQ((*rows)[3].verdict.outcome, SolutionOutcome::kProblemError);
  const RecheckTotals t = recheck_totals(*rows);
  EXPECT_EQ(t.claims, 3u);
  EXPECT_EQ(t.holds, 1u);
  EXPECT_EQ(t.loose_only, 1u);  // the lazy result KernelBench's allclose passes
  const std::string table = recheck_table(*rows);
  EXPECT_NE(table.find("| 2_lazy.py | 2_softmax.py | format | lazy_result |"), std::string::npos) << table;
  // Again: every row comes from the results file; a changed solution is checked again.
  size_t reused = 0;
  ASSERT_TRUE(recheck(*ev, o, [&](size_t, size_t, const RecheckRow&, bool r) { reused += r; }));
  EXPECT_EQ(reused, 4u);
  put(tmp.path / "sol" / "1_fast.py", std::string("# kevo-fake: outcome=wrong_output\n") + kSolution);
  auto again = recheck(*ev, o, [&](size_t, size_t, const RecheckRow&, bool) {});
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ((*again)[0].verdict.outcome, SolutionOutcome::kWrongOutput);
  // Without a GPU runtime: needs_gpu, and the fake's rows are not taken for its own.
  auto cpu = needs_gpu_evaluator();
  auto none = recheck(*cpu, o, [&](size_t, size_t, const RecheckRow&, bool r) { EXPECT_FALSE(r); });
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_EQ((*none)[0].verdict.outcome, SolutionOutcome::kNeedsGpu);
}

}  // namespace
}  // namespace kevo::interop
