// kevo translate: a first kernel from a PyTorch reference, against the scripted loopback model and
// the marker evaluator; `kevo evolve` translating first; `kevo export RUN --torch DIR`.
#include <set>

#include "evolve/prompts.h"
#include "evolve/translate.h"
#include "harness.h"
#include "util/fs.h"
#include "util/subprocess.h"

namespace kevo::evolve {
namespace {

using namespace testing;
namespace fs = std::filesystem;

const char* kReference = R"(import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return x * 2.0  # DOUBLE_THE_INPUT

N = 1048576

def get_inputs():
    return [torch.randn(N)]

def get_init_inputs():
    return []
)";

// The harness's task as a PyTorch-oracle task: reference.py, no reference.cpp, no baseline.cu.
Task torch_task(const fs::path& dir, const std::string& baseline = "") {
  fs::create_directories(dir);
  std::string toml = kTaskToml;
  auto p = toml.find("bytes = \"8*N\"\n");
  EXPECT_NE(p, std::string::npos);
  toml.insert(p + 14, "oracle = \"torch\"\ntorch_reference = \"reference.py\"\n");
  write(dir / "task.toml", toml);
  write(dir / "reference.py", kReference);
  if (!baseline.empty()) write(dir / "baseline.cu", baseline);
  auto t = load_task(dir);
  EXPECT_TRUE(t) << (t ? "" : t.error().message);
  return *t;
}

struct TranslateHarness {
  explicit TranslateHarness(PromptServer::Responder r, const std::string& baseline = "")
      : h(std::move(r)), task(torch_task(h.dir / "ttask", baseline)) {}
  Result<TranslateOutcome> run(int rounds = 4, bool force = false, bool with_llm = true) {
    TranslateOptions o;
    o.rounds = rounds;
    o.force = force;
    return translate(task, h.evaluator, *h.db, with_llm ? h.client.get() : nullptr, h.cancel, o);
  }
  Harness h;
  Task task;
};

std::string scripted(const std::vector<std::string>& markers, int n) {
  const std::string& m = markers[std::min<size_t>(n, markers.size() - 1)];
  return answer("t" + std::to_string(n), "a plain translation", kernel_source(m));
}

TEST(Translate, FirstRoundSuccessWritesTheBaseline) {
  TranslateHarness t([](const std::string&, int n) { return scripted({"pass time_ms=2.0"}, n); });
  ASSERT_FALSE(t.task.has_baseline());
  auto r = t.run();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->ok()) << r->message;
  ASSERT_EQ(r->attempts.size(), 1u);
  EXPECT_EQ(r->attempts[0].outcome, store::CandidateOutcome::kPass);
  ASSERT_TRUE(t.task.has_baseline());
  auto text = read_file(t.task.baseline_path());
  ASSERT_TRUE(text);
  EXPECT_TRUE(contains(*text, "KEVO_EXPORT int kevo_forward"));
  EXPECT_TRUE(contains(*text, "kevo translate"));  // provenance
  // No temporary file is left beside it.
  for (const auto& e : fs::directory_iterator(t.task.dir))
    EXPECT_FALSE(contains(e.path().filename().string(), ".tmp")) << e.path();

  auto prompts = t.h.server.prompts();
  ASSERT_EQ(prompts.size(), 1u);
  EXPECT_TRUE(contains(prompts[0], "DOUBLE_THE_INPUT"));             // the PyTorch module
  EXPECT_TRUE(contains(prompts[0], "y[i] = 2 * x[i]"));              // the description
  EXPECT_TRUE(contains(prompts[0], "KEVO_EXPORT int kevo_forward"));  // the ABI
  EXPECT_TRUE(contains(prompts[0], "x: f32 [N]"));                    // the interface
  EXPECT_TRUE(contains(prompts[0], "ragged: N=1001"));                // visible shapes
  EXPECT_FALSE(contains(prompts[0], "Baseline implementation"));

  // Checked on the visible configs, then on the held-out ones, never timed against anything.
  auto calls = t.h.evaluator.calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_TRUE(calls[0].visible_only);
  EXPECT_TRUE(calls[1].held_out_only);

  // Recorded like any candidate, as a run of its own.
  auto run = t.h.db->get_run(r->run_id);
  ASSERT_TRUE(run);
  EXPECT_EQ(run->strategy, "translate");
  EXPECT_EQ(run->status, store::RunStatus::kFinished);
  EXPECT_EQ(run->best_candidate, r->candidate);
  auto cands = t.h.candidates(r->run_id);
  ASSERT_EQ(cands.size(), 1u);
  EXPECT_EQ(cands[0].op, "translate");
  EXPECT_EQ(cands[0].outcome, store::CandidateOutcome::kPass);
  EXPECT_TRUE(cands[0].accepted);
  EXPECT_TRUE(contains(cands[0].prompt, "DOUBLE_THE_INPUT"));
  auto totals = t.h.db->totals(r->run_id);
  ASSERT_TRUE(totals);
  EXPECT_EQ(totals->llm_calls, 1);
}

TEST(Translate, CompileErrorThenFixSucceedsInRoundTwoWithTheDiagnostic) {
  TranslateHarness t([](const std::string&, int n) {
    return scripted({"compile_error kernel.cu(7): error: identifier \"blockIdx_x\" is undefined", "pass"}, n);
  });
  auto r = t.run();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->ok()) << r->message;
  ASSERT_EQ(r->attempts.size(), 2u);
  EXPECT_EQ(r->attempts[0].outcome, store::CandidateOutcome::kCompileError);
  EXPECT_TRUE(contains(r->attempts[0].feedback, "blockIdx_x"));
  auto prompts = t.h.server.prompts();
  ASSERT_EQ(prompts.size(), 2u);
  EXPECT_FALSE(contains(prompts[0], "blockIdx_x"));
  EXPECT_TRUE(contains(prompts[1], "The compiler said:"));
  EXPECT_TRUE(contains(prompts[1], "identifier \"blockIdx_x\" is undefined"));
  EXPECT_TRUE(contains(prompts[1], "Your previous kernel"));
  EXPECT_TRUE(contains(prompts[1], "fake: compile_error"));  // the kernel that failed
  EXPECT_TRUE(contains(prompts[1], "DOUBLE_THE_INPUT"));     // still the reference
  EXPECT_TRUE(t.task.has_baseline());
  auto text = read_file(t.task.baseline_path());
  EXPECT_TRUE(contains(*text, "fake: pass"));
  // The attempt chain: round 2 descends from round 1.
  auto cands = t.h.candidates(r->run_id);
  ASSERT_EQ(cands.size(), 2u);
  EXPECT_EQ(cands[0].outcome, store::CandidateOutcome::kCompileError);
  EXPECT_TRUE(cands[0].parents.empty());
  EXPECT_EQ(cands[1].parents, std::vector<int64_t>{cands[0].id});
  EXPECT_EQ(cands[1].repair_round, 1);
  EXPECT_TRUE(cands[1].accepted);
  EXPECT_FALSE(cands[0].accepted);
}

TEST(Translate, AllRoundsFailingLeavesNoBaselineAndSaysWhy) {
  TranslateHarness t([](const std::string&, int n) {
    if (n == 1) return std::string("I cannot write that kernel.");  // no code at all
    return scripted({"incorrect mismatch at [5]: got 1, expected 2"}, n);
  });
  auto r = t.run(3);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_FALSE(r->ok());
  EXPECT_EQ(r->status, TranslateStatus::kRoundsExhausted);
  EXPECT_TRUE(contains(r->message, "3 rounds")) << r->message;
  EXPECT_TRUE(contains(r->message, "mismatch at [5]: got 1, expected 2")) << r->message;  // the last diagnostic
  EXPECT_FALSE(t.task.has_baseline());
  ASSERT_EQ(r->attempts.size(), 3u);
  EXPECT_EQ(r->attempts[1].outcome, store::CandidateOutcome::kInvalidAnswer);
  auto prompts = t.h.server.prompts();
  ASSERT_EQ(prompts.size(), 3u);
  EXPECT_TRUE(contains(prompts[1], "First mismatch"));
  EXPECT_TRUE(contains(prompts[2], "held no kernel"));
  EXPECT_TRUE(contains(prompts[2], "fake: incorrect"));  // the last kernel is still the one to fix
  auto run = t.h.db->get_run(r->run_id);
  ASSERT_TRUE(run);
  EXPECT_EQ(run->status, store::RunStatus::kFailed);
  EXPECT_TRUE(contains(run->note, "mismatch at [5]"));
  EXPECT_EQ(run->best_candidate, 0);
  for (const auto& e : fs::directory_iterator(t.task.dir))
    EXPECT_FALSE(contains(e.path().filename().string(), "baseline")) << e.path();
}

TEST(Translate, HeldOutShapesNeverReachAPrompt) {
  // Round 1 passes the visible shapes but fails the held-out ones; round 2 passes everything.
  TranslateHarness t([](const std::string&, int n) { return scripted({"pass held_out_fail", "pass"}, n); });
  auto r = t.run();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->ok()) << r->message;
  ASSERT_EQ(r->attempts.size(), 2u);
  auto prompts = t.h.server.prompts();
  ASSERT_EQ(prompts.size(), 2u);
  for (const auto& p : prompts) {
    EXPECT_FALSE(contains(p, kHeldName)) << p;
    EXPECT_FALSE(contains(p, kHeldValue)) << p;
  }
  EXPECT_TRUE(contains(prompts[1], "not shown"));
  // The held-out details are kept in the database (for people), not sent.
  auto cands = t.h.candidates(r->run_id);
  ASSERT_EQ(cands.size(), 2u);
  EXPECT_EQ(cands[0].outcome, store::CandidateOutcome::kIncorrect);
  EXPECT_TRUE(contains(cands[0].message, "held-out"));
  EXPECT_TRUE(contains(cands[0].message, kHeldValue));  // the detail the model never saw
}

TEST(Translate, AnExistingBaselineIsNotOverwritten) {
  const std::string mine = "// my own baseline\n";
  TranslateHarness t([](const std::string&, int n) { return scripted({"pass"}, n); }, mine);
  auto r = t.run();
  ASSERT_FALSE(r);
  EXPECT_TRUE(contains(r.error().message, "already has a baseline")) << r.error().message;
  EXPECT_TRUE(contains(r.error().message, "--force"));
  EXPECT_EQ(*read_file(t.task.baseline_path()), mine);
  EXPECT_TRUE(t.h.server.prompts().empty());
  // --force replaces it, and does not show the old one to the model.
  auto f = t.run(4, true);
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_TRUE(f->ok());
  EXPECT_TRUE(contains(*read_file(t.task.baseline_path()), "fake: pass"));
  ASSERT_EQ(t.h.server.prompts().size(), 1u);
  EXPECT_FALSE(contains(t.h.server.prompts()[0], "my own baseline"));
}

TEST(Translate, NoModelSaysHowToConfigureOne) {
  TranslateHarness t([](const std::string&, int n) { return scripted({"pass"}, n); });
  auto r = t.run(4, false, false);
  ASSERT_FALSE(r);
  EXPECT_TRUE(contains(r.error().message, "--model")) << r.error().message;
  EXPECT_TRUE(contains(r.error().message, "[llm]"));
  EXPECT_FALSE(t.task.has_baseline());
}

TEST(Translate, PromptOfLaterRoundsCarriesTheFeedback) {
  TaskContext ctx;
  ctx.task_name = "t";
  ctx.shapes = {"main (timed): N=4"};
  TranslatePromptInput in;
  in.ctx = &ctx;
  in.torch_file = "reference.py";
  in.torch_source = "class Model: pass";
  auto p1 = build_translate_prompt(in);
  EXPECT_TRUE(contains(p1.user, "class Model: pass"));
  EXPECT_TRUE(contains(p1.user, "Translate the PyTorch reference"));
  EXPECT_FALSE(contains(p1.user, "What went wrong"));
  in.round = 2;
  in.rounds = 4;
  in.failed_source = "__global__ void k() {}";
  in.feedback = "The compiler said: boom";
  auto p2 = build_translate_prompt(in);
  EXPECT_TRUE(contains(p2.user, "What went wrong\nThe compiler said: boom"));
  EXPECT_TRUE(contains(p2.user, "__global__ void k() {}"));
  EXPECT_TRUE(contains(p2.user, "attempt 2 of 4"));
}

// ---- through the kevo binary ---------------------------------------------------------------------

const fs::path kKevo = fs::path(KEVO_BINARY_DIR) / "bin" / "kevo";

RunResult kevo_run(std::vector<std::string> args, const fs::path& home) {
  args.insert(args.begin(), kKevo.string());
  auto r = run_process({.argv = args,
                        .env_add = {{"HOME", home.string()}, {"KEVO_CACHE_DIR", (home / "cache").string()}},
                        .timeout = std::chrono::seconds(120)});
  EXPECT_TRUE(r);
  return r ? *r : RunResult{};
}

// A checker that cannot run kernels (no usable GPU) is not the model's problem.
class NoGpuEvaluator : public CandidateEvaluator {
 public:
  Verdict evaluate_baseline(const Task&, const EvalOptions&) override { return no_gpu(); }
  Verdict evaluate(const Task&, const std::filesystem::path&, const EvalOptions&) override { return no_gpu(); }
  static Verdict no_gpu() {
    Verdict v;
    v.outcome = Outcome::InfraError;
    v.reason = Reason::kNoGpu;
    v.message = "no usable GPU: cudaGetDeviceCount failed";
    return v;
  }
};

TEST(Translate, AnInfrastructureVerdictStopsAtOnceAndIsNeverSentToTheModel) {
  TranslateHarness t([](const std::string&, int n) { return scripted({"pass"}, n); });
  NoGpuEvaluator nogpu;
  TranslateOptions o;
  o.rounds = 4;
  auto r = translate(t.task, nogpu, *t.h.db, t.h.client.get(), t.h.cancel, o);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->status, TranslateStatus::kInfraFailed);
  EXPECT_TRUE(contains(r->message, "no usable GPU")) << r->message;
  EXPECT_EQ(r->attempts.size(), 1u);
  auto prompts = t.h.server.prompts();
  ASSERT_EQ(prompts.size(), 1u);  // no second round paid for
  for (const auto& p : prompts) EXPECT_FALSE(contains(p, "no usable GPU"));
  auto run = t.h.db->get_run(r->run_id);
  ASSERT_TRUE(run);
  EXPECT_EQ(run->status, store::RunStatus::kFailed);
  EXPECT_EQ(run->stop_reason, "infra_error");
  EXPECT_FALSE(t.task.has_baseline());
}

TEST(Translate, ATranslateRunCannotBeResumedAndItsRecordIsKept) {
  TranslateHarness t([](const std::string&, int n) { return scripted({"incorrect wrong"}, n); });
  auto r = t.run(1);
  ASSERT_TRUE(r) << r.error().message;
  auto before = t.h.db->get_run(r->run_id);
  ASSERT_TRUE(before);
  Engine e(t.task, t.h.evaluator, *t.h.db, t.h.client.get(), nullptr, t.h.cancel);
  auto resumed = e.resume(r->run_id, t.h.options("kevo-default", 2));
  ASSERT_FALSE(resumed);
  EXPECT_TRUE(contains(resumed.error().message, "translate")) << resumed.error().message;
  auto after = t.h.db->get_run(r->run_id);
  ASSERT_TRUE(after);
  EXPECT_EQ(after->stop_reason, before->stop_reason);
  EXPECT_EQ(after->note, before->note);
  EXPECT_EQ(after->status, before->status);
}

TEST(TranslateCli, TranslateThenExportTorchWritesTheExtension) {
  if (!fs::exists(kKevo)) GTEST_SKIP() << "no kevo binary at " << kKevo;
  PromptServer server([](const std::string&, int n) { return scripted({"compile_error boom", "pass"}, n); });
  auto dir = temp_dir("tcli");
  Task task = torch_task(dir / "task");
  std::string db = (dir / "runs.db").string();
  std::string model = server.base_url() + "#m1";

  auto none = kevo_run({"translate", task.dir.string(), "--db", db, "--fake-gpu"}, dir);
  EXPECT_EQ(none.exit_code, 2) << none.out << none.err;
  EXPECT_TRUE(contains(none.err, "--model")) << none.err;

  auto tr = kevo_run({"translate", task.dir.string(), "--db", db, "--fake-gpu", "--model", model, "--llm", "live"},
                     dir);
  ASSERT_EQ(tr.exit_code, 0) << tr.out << tr.err;
  EXPECT_TRUE(contains(tr.out, "wrote")) << tr.out;
  EXPECT_TRUE(contains(tr.err, "round 1: compile_error")) << tr.err;
  EXPECT_TRUE(fs::exists(task.baseline_path()));
  // Written by a fake evaluator: its header says it was never checked, not that it was.
  auto written = read_file(task.baseline_path());
  ASSERT_TRUE(written);
  EXPECT_TRUE(contains(*written, "NEVER CHECKED")) << *written;
  EXPECT_FALSE(contains(*written, "checked against the")) << *written;

  auto again = kevo_run({"translate", task.dir.string(), "--db", db, "--fake-gpu", "--model", model}, dir);
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_TRUE(contains(again.err, "already has a baseline")) << again.err;

  // The translate run's kernel (run 1) as a PyTorch extension.
  auto out = dir / "ext";
  auto ex = kevo_run({"export", "1", "--db", db, "--torch", out.string()}, dir);
  ASSERT_EQ(ex.exit_code, 0) << ex.out << ex.err;
  for (const char* f : {"kernel.cu", "kevo/kernel.h", "ext.cpp", "loader.py", "test_ext.py", "reference.py"})
    EXPECT_TRUE(fs::exists(out / f)) << f;
  auto k = read_file(out / "kernel.cu");
  ASSERT_TRUE(k);
  EXPECT_TRUE(contains(*k, "kevo_forward"));
  EXPECT_TRUE(contains(*k, "kevo run 1"));
  EXPECT_TRUE(contains(*read_file(out / "ext.cpp"), "TORCH_CHECK"));
  // Only the extension: no standalone files unless -o is given too.
  EXPECT_FALSE(fs::exists(out / "main.cu"));
  fs::remove_all(dir);
}

TEST(TranslateCli, EvolveTranslatesATaskWithoutABaselineFirst) {
  if (!fs::exists(kKevo)) GTEST_SKIP() << "no kevo binary at " << kKevo;
  PromptServer server(improving_kernels());
  auto dir = temp_dir("ecli");
  Task task = torch_task(dir / "task");
  std::string db = (dir / "runs.db").string();
  auto r = kevo_run({"evolve", task.dir.string(), "--db", db, "--fake-gpu", "--quiet", "--model",
                     server.base_url() + "#m1", "--budget-candidates", "2", "--llm", "live"},
                    dir);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.err, "translating its PyTorch reference first")) << r.err;
  EXPECT_TRUE(fs::exists(task.baseline_path()));
  EXPECT_TRUE(contains(r.out, "run 2")) << r.out;  // run 1 is the translation
  auto prompts = server.prompts();
  ASSERT_EQ(prompts.size(), 4u);  // the model's first short request (is it there?), 1 translation, 2 candidates
  EXPECT_TRUE(contains(prompts[0], "pong"));
  EXPECT_TRUE(contains(prompts[1], "DOUBLE_THE_INPUT"));
  EXPECT_TRUE(contains(prompts[2], "Baseline implementation"));  // evolution starts from the translation
  // Without a model it says how to configure one.
  auto t2 = torch_task(dir / "task2");
  auto n = kevo_run({"evolve", t2.dir.string(), "--db", db, "--fake-gpu", "--quiet"}, dir);
  EXPECT_EQ(n.exit_code, 2) << n.out << n.err;
  EXPECT_TRUE(contains(n.err, "--model")) << n.err;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kevo::evolve
