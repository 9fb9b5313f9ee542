// The GPU suite's manifest checked on any machine: every entry reads as codes this build knows,
// names files and tasks that exist, and expects of the static gate what the static check finds,
// so a misspelt reason or rule fails here rather than on the next GPU run.
#include "kernel_manifest.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "check/static_check.h"
#include "task/dtype.h"
#include "task/task.h"
#include "util/fs.h"

namespace fs = std::filesystem;
using kevo::Outcome;
using kevo::Reason;
using kevo::gpu_suite::KernelCase;
using kevo::gpu_suite::parse_kernel_manifest;

namespace {

const fs::path kSrc = [] {
  const char* v = getenv("KEVO_HOME");
  return v && *v ? fs::path(v) : fs::path(KEVO_SOURCE_DIR);
}();
const fs::path kKernels = kSrc / "tests" / "gpu" / "kernels";

std::vector<KernelCase> manifest() {
  auto m = kevo::gpu_suite::load_kernel_manifest(kKernels / "manifest.toml");
  EXPECT_TRUE(m) << m.error().message;
  return m ? *m : std::vector<KernelCase>{};
}

TEST(KernelManifest, EveryEntryReadsAsKnownCodes) {
  auto cases = manifest();
  ASSERT_FALSE(cases.empty());
  int adversarial = 0;
  for (const auto& k : cases) {
    EXPECT_TRUE(fs::exists(kKernels / k.file)) << k.file;
    EXPECT_TRUE(fs::exists(kSrc / "tasks" / k.task / "task.toml")) << k.file << ": no task " << k.task;
    // A pass has no reason; a rejection names its reason by the code's own text.
    if (k.expect == Outcome::Pass) {
      EXPECT_FALSE(k.reason) << k.file;
    }
    if (k.reason) {
      EXPECT_EQ(kevo::parse_reason(k.reason_text()), k.reason) << k.file;
      EXPECT_TRUE(k.accepts(k.reason_text())) << k.file;
    }
    if (k.expect != Outcome::Pass) {
      EXPECT_TRUE(k.reason) << k.file << ": a rejection names its reason";
    }
    adversarial += k.expect != Outcome::Pass;
  }
  EXPECT_GT(adversarial, 10);
}

// With the static gate on, the verdict of a kernel the static check finds unsafe is that finding
// (the first one): the manifest must expect exactly that rule, and no static finding otherwise.
TEST(KernelManifest, StaticExpectationsAreWhatTheStaticCheckFinds) {
  for (const auto& k : manifest()) {
    if (k.no_static || k.expect == Outcome::CompileError) continue;
    auto task = kevo::load_task(kSrc / "tasks" / k.task);
    ASSERT_TRUE(task) << task.error().message;
    auto src = kevo::read_file(kKernels / k.file);
    ASSERT_TRUE(src) << src.error().message;
    kevo::StaticCheckOptions o;
    o.allow_cublas = task->allow_cublas;
    o.allow_cudnn = task->allow_cudnn;
    o.precision = kevo::dtype_name(task->precision());
    std::string first_unsafe;
    for (const auto& f : kevo::static_check(*src, o))
      if (f.severity == kevo::Finding::Severity::Unsafe) {
        first_unsafe = f.rule;
        break;
      }
    if (k.reason == Reason::kStatic) {
      EXPECT_FALSE(first_unsafe.empty()) << k.file << ": expects " << k.reason_text() << ", the static check finds nothing";
      if (!k.static_rule.empty()) {
        EXPECT_EQ(first_unsafe, k.static_rule) << k.file;
      }
    } else {
      EXPECT_EQ(first_unsafe, "") << k.file << ": expects " << k.reason_text() << " but the static gate stops it first";
    }
  }
}

TEST(KernelManifest, AnUnknownReasonOrOutcomeIsAnErrorNamingTheEntry) {
  auto r = parse_kernel_manifest(R"(
[[kernel]]
file = "adversarial/noop.cu"
task = "gelu"
expect = "incorrect"
reason = "unwriten"

[[kernel]]
file = "good/gelu_float4.cu"
task = "gelu"
expect = "passed"
)",
                                 "manifest.toml");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("kernel 1 ('adversarial/noop.cu'): unknown reason 'unwriten'"), std::string::npos)
      << r.error().message;
  EXPECT_NE(r.error().message.find("kernel 2 ('good/gelu_float4.cu'): unknown outcome 'passed'"), std::string::npos)
      << r.error().message;
}

TEST(KernelManifest, ReasonsReadAsCodesWithTheirRule) {
  auto r = parse_kernel_manifest(R"(
[[kernel]]
file = "a.cu"
task = "gelu"
expect = "unsafe"
reason = "static:stream_create"

[[kernel]]
file = "b.cu"
task = "gelu"
expect = "unsafe"
reason = "timing_forged"
also = ["below_sol"]
no_static = true

[[kernel]]
file = "c.cu"
task = "gelu"
expect = "crash"
reason = "illegal_address"
)",
                                 "manifest.toml");
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ((*r)[0].expect, Outcome::Unsafe);
  EXPECT_EQ((*r)[0].reason, Reason::kStatic);
  EXPECT_EQ((*r)[0].static_rule, "stream_create");
  EXPECT_EQ((*r)[1].reason, Reason::kTimingForged);
  EXPECT_TRUE((*r)[1].no_static);
  EXPECT_TRUE((*r)[1].accepts("timing_forged"));
  EXPECT_TRUE((*r)[1].accepts("below_sol"));
  EXPECT_FALSE((*r)[1].accepts("hidden_work"));
  EXPECT_FALSE((*r)[1].accepts("not_a_reason"));
  EXPECT_TRUE((*r)[0].accepts("static:stream_create"));
  EXPECT_FALSE((*r)[0].accepts("static:thread_create"));
  EXPECT_EQ((*r)[2].expect, Outcome::Crash);
  EXPECT_EQ((*r)[2].reason, Reason::kIllegalAddress);
}

TEST(KernelManifest, ARejectionWithoutAReasonIsAnError) {
  auto r = parse_kernel_manifest(R"(
[[kernel]]
file = "a.cu"
task = "gelu"
expect = "unsafe"

[[kernel]]
file = "b.cu"
task = "gelu"
expect = "unsafe"
reason = "timing_forged"
also = ["below_soll"]
)",
                                 "manifest.toml");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("kernel 1 ('a.cu'): expects 'unsafe' without a reason"), std::string::npos)
      << r.error().message;
  EXPECT_NE(r.error().message.find("kernel 2 ('b.cu'): unknown reason 'below_soll' in also"), std::string::npos)
      << r.error().message;
}

}  // namespace
