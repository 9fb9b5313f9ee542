// Fuzzes LLM answer parsing (code blocks, named fields, SEARCH/REPLACE blocks) and applying the
// edits, both to a fixed parent kernel and to the answer's own text.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "llm/apply_edits.h"
#include "llm/parse_answer.h"

namespace {
constexpr std::string_view kParent = R"(#include <kevo/kernel.h>

__global__ void scale(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}

extern "C" int kevo_forward(const kevo_args* a) {
  int n = (int)a->dims[0];
  scale<<<(n + 255) / 256, 256, 0, a->stream>>>((const float*)a->tensors[0].data,
                                              (float*)a->tensors[1].data, n);
  return 0;
}
)";
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = kevo::llm::parse_answer(text);
  (void)parsed.main_code();
  (void)kevo::llm::extract_code(text);
  (void)kevo::llm::apply_answer_edits(kParent, text);
  if (!parsed.edits.empty()) (void)kevo::llm::apply_edits(text, parsed.edits);
  return 0;
}
