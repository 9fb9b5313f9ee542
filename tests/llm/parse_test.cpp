// Answer parsing and SEARCH/REPLACE application over realistic model answers.
#include <gtest/gtest.h>

#include "llm/apply_edits.h"
#include "llm/parse_answer.h"

namespace kevo::llm {
namespace {

const char* kParent = R"(#include <cuda_runtime.h>

__global__ void add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}

void launch(const float* a, const float* b, float* c, int n, cudaStream_t s) {
    int threads = 256;
    int blocks = (n + threads - 1) / threads;
    add<<<blocks, threads, 0, s>>>(a, b, c, n);
}
)";

TEST(ParseAnswer, SeveralBlocksPicksTheCudaKernel) {
  const char* answer = R"(NAME: vectorized_add
THOUGHT: Use float4 loads so each thread moves 16 bytes;
this halves the number of memory transactions.

First, a quick check you can run:

```python
import torch
print(torch.cuda.is_available())
```

A helper:

```cpp
inline int div_up(int a, int b) { return (a + b - 1) / b; }
```

The kernel:

```cuda
#include <cuda_runtime.h>
__global__ void add4(const float4* a, const float4* b, float4* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float4 x = a[i], y = b[i]; c[i] = make_float4(x.x+y.x, x.y+y.y, x.z+y.z, x.w+y.w); }
}
```

This should be about 1.3x faster.)";
  ParsedAnswer p = parse_answer(answer);
  EXPECT_EQ(p.name, "vectorized_add");
  EXPECT_EQ(p.thought,
            "Use float4 loads so each thread moves 16 bytes; this halves the number of memory "
            "transactions.");
  ASSERT_EQ(p.code_blocks.size(), 3u);
  EXPECT_EQ(p.code_blocks[0].lang, "python");
  const CodeBlock* main = p.main_code();
  ASSERT_NE(main, nullptr);
  EXPECT_EQ(main->lang, "cuda");
  EXPECT_TRUE(main->code.starts_with("#include <cuda_runtime.h>\n__global__ void add4"));
  EXPECT_TRUE(main->code.ends_with("}\n"));
  EXPECT_TRUE(p.edits.empty());
}

TEST(ParseAnswer, CppAndUnlabeledBlocksAndTagFields) {
  const char* answer =
      "<NAME>tiled_gemm</NAME>\n<RATIONALE>Shared-memory tiles of 32x32.</RATIONALE>\n\n"
      "```\nshort();\n```\n\n```c++\n__global__ void gemm() { /* long body */ }\n```\n";
  ParsedAnswer p = parse_answer(answer);
  EXPECT_EQ(p.name, "tiled_gemm");
  EXPECT_EQ(p.thought, "Shared-memory tiles of 32x32.");
  ASSERT_NE(p.main_code(), nullptr);
  EXPECT_EQ(p.main_code()->lang, "c++") << "labeled C++ beats unlabeled";

  ParsedAnswer q = parse_answer("**Name:** `warp_reduce`\n\n```\n__global__ void r() {}\n```");
  EXPECT_EQ(q.name, "warp_reduce");
  ASSERT_NE(q.main_code(), nullptr);
  EXPECT_EQ(q.main_code()->code, "__global__ void r() {}\n");
}

TEST(ParseAnswer, MissingFenceAndUnclosedFence) {
  const char* bare = "Here is the new kernel.\n\n#include <cuda_runtime.h>\n\n__global__ void k(float* x) {\n"
                     "  x[threadIdx.x] = 0;\n}\n\nIt zeroes the buffer.";
  ParsedAnswer p = parse_answer(bare);
  ASSERT_NE(p.main_code(), nullptr);
  EXPECT_TRUE(p.main_code()->inferred);
  EXPECT_EQ(p.main_code()->code,
            "#include <cuda_runtime.h>\n\n__global__ void k(float* x) {\n  x[threadIdx.x] = 0;\n}\n");
  auto code = extract_code(bare);
  ASSERT_TRUE(code);

  const char* cut = "```cuda\n__global__ void k() {\n  int i = 0;\n";  // max_tokens hit
  ParsedAnswer c = parse_answer(cut);
  ASSERT_NE(c.main_code(), nullptr);
  EXPECT_FALSE(c.main_code()->closed);
  auto e = extract_code(cut);
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().message.find("not closed"), std::string::npos);

  auto none = extract_code("I think you should use shared memory.");
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("no code block"), std::string::npos);
}

TEST(ParseAnswer, TildeFencesAndLongerFences) {
  ParsedAnswer p = parse_answer("~~~cu\n__global__ void a() {}\n~~~\n````cuda\nx\n```\ny\n````\n");
  ASSERT_EQ(p.code_blocks.size(), 2u);
  EXPECT_EQ(p.code_blocks[0].lang, "cu");
  EXPECT_EQ(p.code_blocks[1].code, "x\n```\ny\n");
}

TEST(ApplyEdits, FencedBlocksApplyExactly) {
  const char* answer = R"(NAME: bigger_blocks
THOUGHT: 512 threads hide latency better here.

```cuda
<<<<<<< SEARCH
    int threads = 256;
=======
    int threads = 512;
>>>>>>> REPLACE
```
)";
  ParsedAnswer p = parse_answer(answer);
  EXPECT_EQ(p.name, "bigger_blocks");
  EXPECT_EQ(p.thought, "512 threads hide latency better here.");
  ASSERT_EQ(p.edits.size(), 1u);
  EXPECT_TRUE(p.code_blocks.empty()) << "a fence around edit blocks is not a code block";
  auto out = apply_answer_edits(kParent, answer);
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_NE(out->find("int threads = 512;"), std::string::npos);
  EXPECT_EQ(out->find("int threads = 256;"), std::string::npos);
  EXPECT_EQ(out->size(), std::string(kParent).size());
}

TEST(ApplyEdits, IndentationDriftIsReindented) {
  // The model dropped the 4-space indentation of the function body.
  const char* answer = R"(<<<<<<< SEARCH
if (i < n) {
    c[i] = a[i] + b[i];
}
=======
for (; i < n; i += blockDim.x * gridDim.x) {
    c[i] = a[i] + b[i];
}
>>>>>>> REPLACE
)";
  auto out = apply_answer_edits(kParent, answer);
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_NE(out->find("    for (; i < n; i += blockDim.x * gridDim.x) {\n"
                      "        c[i] = a[i] + b[i];\n"
                      "    }\n}\n"),
            std::string::npos)
      << *out;
}

TEST(ApplyEdits, TrailingSpacesTabsAndBlankLinesAreTolerated) {
  std::string answer =
      "<<<<<<< SEARCH\n"
      "    int threads = 256;   \n"
      "\tint blocks = (n + threads - 1) / threads;\n"
      "\n"
      "    add<<<blocks, threads, 0, s>>>(a, b, c, n);\n"
      "=======\n"
      "    int threads = 128;\n"
      "    int blocks = (n + threads - 1) / threads;\n"
      "    add<<<blocks, threads, 0, s>>>(a, b, c, n);\n"
      ">>>>>>> REPLACE\n";
  auto out = apply_answer_edits(kParent, answer);
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_NE(out->find("    int threads = 128;\n    int blocks"), std::string::npos) << *out;
}

TEST(ApplyEdits, SeveralBlocksApplyInOrder) {
  std::string answer =
      "Two changes.\n\n<<<<<<< SEARCH\n    int threads = 256;\n=======\n    int threads = 1024;\n"
      ">>>>>>> REPLACE\n\nand\n\n<<<<<<< SEARCH\n    int threads = 1024;\n"
      "    int blocks = (n + threads - 1) / threads;\n=======\n    int threads = 1024;\n"
      "    int blocks = min((n + threads - 1) / threads, 4096);\n>>>>>>> REPLACE\n";
  auto out = apply_answer_edits(kParent, answer);
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_NE(out->find("min((n + threads - 1) / threads, 4096)"), std::string::npos);
}

TEST(ApplyEdits, ABlockThatDoesNotMatchIsAnErrorForTheModel) {
  std::string answer =
      "<<<<<<< SEARCH\n    int threads = 256;\n=======\n    int threads = 64;\n>>>>>>> REPLACE\n"
      "<<<<<<< SEARCH\n    int i = blockIdx.x * blockDim.x + threadIdx.y;\n    if (i < n) {\n=======\n"
      "    int i = 0;\n>>>>>>> REPLACE\n";
  auto out = apply_answer_edits(kParent, answer);
  ASSERT_FALSE(out);
  const std::string& m = out.error().message;
  EXPECT_NE(m.find("1 of 2"), std::string::npos) << m;
  EXPECT_NE(m.find("no edit was made"), std::string::npos) << m;
  EXPECT_NE(m.find("Block 2"), std::string::npos) << m;
  EXPECT_NE(m.find("int i = blockIdx.x * blockDim.x + threadIdx.y;"), std::string::npos)
      << "names the line that is not in the source: " << m;
  EXPECT_NE(m.find("most similar source lines are 4-5"), std::string::npos) << m;
  EXPECT_NE(m.find("int i = blockIdx.x * blockDim.x + threadIdx.x;"), std::string::npos) << m;
}

TEST(ApplyEdits, AmbiguousEmptyAndMalformedBlocks) {
  std::string src = "x = 1;\ny = 2;\nx = 1;\n";
  auto amb = apply_edits(src, {{"x = 1;\n", "x = 3;\n"}});
  ASSERT_FALSE(amb);
  EXPECT_NE(amb.error().message.find("matches 2 places (lines 1, 3)"), std::string::npos)
      << amb.error().message;
  auto fine = apply_edits(src, {{"x = 1;\ny = 2;\n", "x = 3;\ny = 2;\n"}});
  ASSERT_TRUE(fine);
  EXPECT_EQ(*fine, "x = 3;\ny = 2;\nx = 1;\n");

  auto empty = apply_edits(src, {{"", "z = 0;\n"}});
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.error().message.find("empty"), std::string::npos);

  auto malformed = apply_answer_edits(src, "<<<<<<< SEARCH\nx = 1;\n>>>>>>> REPLACE\n");
  ASSERT_FALSE(malformed);
  EXPECT_NE(malformed.error().message.find("malformed"), std::string::npos);

  auto no_edits = apply_answer_edits(src, "```cuda\nint x;\n```");
  ASSERT_FALSE(no_edits);
  EXPECT_NE(no_edits.error().message.find("no SEARCH/REPLACE block"), std::string::npos);
}

TEST(ApplyEdits, DeletionAndEndOfFile) {
  std::string src = "a\nb\nc";  // no final newline
  auto del = apply_edits(src, {{"b\n", ""}});
  ASSERT_TRUE(del);
  EXPECT_EQ(*del, "a\nc");
  auto last = apply_edits(src, {{"  c\n", "  d\n"}});  // indentation drift at the last line
  ASSERT_TRUE(last) << last.error().message;
  EXPECT_EQ(*last, "a\nb\nd");
}

}  // namespace
}  // namespace kevo::llm
