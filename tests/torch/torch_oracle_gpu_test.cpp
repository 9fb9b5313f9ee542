// GPU test of the PyTorch oracle on the device data plane (label gpu; skips without a GPU or a
// torch that sees one): real kevo-runner processes lend their buffers to the bridge through CUDA
// IPC, torch runs the module on them in place and writes its outputs there, and the oracle's
// runner compares the candidate's buffers with them. Bundled tasks get a PyTorch reference of the
// same op: f32 GELU (with PyTorch's eager time taken on lent inputs) and a bf16 permutation, exact
// to the bit, which a kernel wrong in one element fails at that element.
#include <gtest/gtest.h>

#include <fstream>

#include "check/evaluator.h"
#include "torch/bridge.h"
#include "util/fs.h"
#include "util/subprocess.h"

namespace fs = std::filesystem;
using namespace kevo;

namespace {

// The source tree: $KEVO_HOME on the GPU machine (the build's path may differ there).
fs::path source_dir() {
  const char* h = getenv("KEVO_HOME");
  return h && *h ? fs::path(h) : fs::path(KEVO_SOURCE_DIR);
}

// y = x.transpose(1, 2) for x [B, S, H, D] in bf16; with BAD, element 7 of y is off by one.
constexpr const char* kPermute = R"(#include <kevo/kernel.h>
#include <cuda_bf16.h>
__global__ void perm(const __nv_bfloat16* x, __nv_bfloat16* y, long long B, long long S, long long H, long long D) {
  long long n = B * S * H * D;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    long long d = i % D, s = (i / D) % S, h = (i / (D * S)) % H, b = i / (D * S * H);
    __nv_bfloat16 v = x[((b * S + s) * H + h) * D + d];
#ifdef BAD
    if (i == 7) v = __float2bfloat16(__bfloat162float(v) + 1.0f);
#endif
    y[i] = v;
  }
}
KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  perm<<<4096, 256, 0, a->stream>>>((const __nv_bfloat16*)a->inputs[0].data, (__nv_bfloat16*)a->outputs[0].data,
                                    a->dims[0], a->dims[1], a->dims[2], a->dims[3]);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
)";

class TorchOracleGpu : public testing::Test {
 protected:
  void SetUp() override {
    auto smi = run_process({.argv = {"nvidia-smi", "-L"}, .timeout = std::chrono::seconds(30)});
    if (!smi || !smi->ok() || smi->out.find("GPU") == std::string::npos) GTEST_SKIP() << "no GPU";
    auto b = torch::TorchBridge::start();
    if (!b) GTEST_SKIP() << "no PyTorch bridge: " << b.error().message;
    if (!b->info().cuda) GTEST_SKIP() << "torch " << b->info().torch << " sees no GPU";
    if (const char* k = getenv("KEVO_BUILD"); k && *k && !getenv("KEVO_RUNNER"))
      setenv("KEVO_RUNNER", (fs::path(k) / "bin" / "kevo-runner").c_str(), 1);
    else if (!getenv("KEVO_RUNNER"))
      setenv("KEVO_RUNNER", (fs::path(KEVO_BINARY_DIR) / "bin" / "kevo-runner").c_str(), 1);
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }
  // A copy of tasks/<name> whose oracle is the PyTorch module `reference`.
  Task torch_task(const std::string& name, const std::string& reference) {
    dir_ = fs::path(testing::TempDir()) / ("kevo-torch-gpu-" + name);
    fs::remove_all(dir_);
    fs::copy(source_dir() / "tasks" / name, dir_, fs::copy_options::recursive);
    auto toml = read_file(dir_ / "task.toml");
    EXPECT_TRUE(toml);
    std::ofstream(dir_ / "task.toml") << "oracle = \"torch\"\ntorch_reference = \"reference.py\"\n" << *toml;
    std::ofstream(dir_ / "reference.py") << reference;
    auto t = load_task(dir_);
    EXPECT_TRUE(t) << t.error().message;
    return t ? *t : Task{};
  }
  static EvalOptions options() {
    EvalOptions o;
    o.seeds = 1;
    o.seed = 5;
    o.time_budget_s = 1.0;
    return o;
  }
  fs::path dir_;
};

}  // namespace

TEST_F(TorchOracleGpu, GeluBaselineAgainstPyTorchTimedOnLentInputs) {
  Task t = torch_task("gelu", "import torch\n\nN = 1000\n\n\ndef module_fn(x):\n"
                              "    return torch.nn.functional.gelu(x)\n\n\n"
                              "def get_inputs():\n    return [torch.randn(N)]\n");
  EvalOptions o = options();
  o.baseline_mode = true;
  o.torch_time = true;
  Verdict v = evaluate(t, o);
  std::cout << "TORCH_ORACLE gelu " << outcome_name(v.outcome) << " " << v.seconds << " s, oracle "
            << (v.work.count("oracle") ? v.work.at("oracle") : 0.0) << " s\n";
  ASSERT_EQ(v.outcome, Outcome::Pass) << v.to_text();
  EXPECT_FALSE(v.work.count("arena")) << v.to_text();  // no tensor went through the checker
  ASSERT_TRUE(v.timing);
  ASSERT_TRUE(v.timing->pytorch) << v.timing->pytorch_note;
  const auto& eager = v.timing->pytorch->modes.at("eager");
  ASSERT_TRUE(eager.ok) << eager.error;
  EXPECT_GT(eager.median_ms, 0);
  std::cout << "TORCH_ORACLE gelu kevo " << v.timing->candidate.median << " ms, eager " << eager.median_ms << " ms\n";
}

TEST_F(TorchOracleGpu, Bf16PermutationExactAndAWrongElementNamed) {
  Task t = torch_task("permute_heads_bf16", "import torch\n\nB = 2\nS = 3\nH = 4\nD = 5\n\n\ndef module_fn(x):\n"
                                            "    return x.transpose(1, 2).contiguous()\n\n\n"
                                            "def get_inputs():\n    return [torch.randn(B, S, H, D).to(torch.bfloat16)]\n");
  for (bool bad : {false, true}) {
    fs::path cand = dir_ / (bad ? "bad.cu" : "good.cu");
    std::ofstream(cand) << (bad ? "#define BAD\n" : "") << kPermute;
    EvalOptions o = options();
    o.candidate = cand;
    o.time = !bad;
    Verdict v = evaluate(t, o);
    std::cout << "TORCH_ORACLE permute_heads_bf16 " << (bad ? "bad " : "good ") << outcome_name(v.outcome) << " "
              << v.seconds << " s\n";
    if (!bad) {
      EXPECT_EQ(v.outcome, Outcome::Pass) << v.to_text();
      continue;
    }
    EXPECT_EQ(v.outcome, Outcome::Incorrect) << v.to_text();
    EXPECT_EQ(v.reason, Reason::kMismatch) << v.to_text();
    // The smallest config first (B=1, S=5, H=3, D=33): flat index 7 is [0, 0, 0, 7].
    EXPECT_NE(v.message.find("config 'small' seed 0: output 'y': 1 of 495 elements wrong; first at [0, 0, 0, 7]"),
              std::string::npos)
        << v.message;
  }
}
