// Reading the host through the compiler: the include rules refuse a source before the compiler
// runs, the compiler runs in a file sandbox where one works, and diagnostics never quote a file
// that is not the candidate's, the toolkit's or the system's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "compile/diagnostics.h"
#include "compile/include_rules.h"
#include "compile/nvcc.h"
#include "compile/sandbox.h"
#include "test_support.h"
#include "util/fs.h"

using namespace kevo;
using kevo::test::TempDir;
using kevo::test::write_text;
using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

namespace {

constexpr const char* kSecret = "sk-kevo-test-secret-4242";

// A dotenv file with an API key, as a user's project might hold.
fs::path write_dotenv(const TempDir& t) {
  fs::path p = t.path / "project" / ".env";
  write_text(p, std::string("OPENAI_API_KEY=") + kSecret + "\n");
  return p;
}

CompileOptions unreachable_compiler(const TempDir& t) {
  CompileOptions o;
  o.nvcc = (t.path / "no-such-nvcc").string();  // reaching it would be an infrastructure error
  o.cache_dir = t.path / "cache";
  return o;
}

}  // namespace

TEST(HostFiles, IncludesOfHostFilesAreRefusedBeforeTheCompiler) {
  TempDir t;
  const std::string env = write_dotenv(t).string();
  const std::string body = "\nKEVO_EXPORT int kevo_forward(const kevo_args* a) { return 0; }\n";
  const std::vector<std::string> heads = {
      "#include \"/etc/passwd\"",           "#include \"" + env + "\"",
      "#include <" + env + ">",              "#include <../../../../../../etc/passwd>",
      "#define F \"" + env + "\"\n#include F", "asm(\".incbin \\\"" + env + "\\\"\");",
      "#embed \"" + env + "\"",              "#pragma GCC dependency \"" + env + "\"",
      "#line 1 \"" + env + "\""};
  for (const std::string& head : heads) {
    std::string src = "#include <kevo/kernel.h>\n" + head + body;
    auto r = compile_cuda_shared(src, "candidate.cu", unreachable_compiler(t));
    ASSERT_TRUE(r) << head << ": " << r.error().message;
    EXPECT_FALSE(r->ok) << head;
    EXPECT_EQ(r->driver, "refused") << head;
    EXPECT_THAT(r->diagnostics, ::testing::ContainsRegex("^line [23]: unsafe: ")) << head;
    EXPECT_THAT(r->diagnostics + r->log, Not(HasSubstr(kSecret))) << head;
    EXPECT_THAT(r->diagnostics + r->log, Not(HasSubstr("root:"))) << head;
  }
}

// `#include "/dev/zero"` ran the host compiler out of memory (47 s, killed): now it never starts
// (the compiler named here does not exist: starting it would be an infrastructure error).
TEST(HostFiles, DevZeroIsRefusedWithoutTheCompiler) {
  TempDir t;
  auto r = compile_cuda_shared("#include \"/dev/zero\"\n", "candidate.cu", unreachable_compiler(t));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_FALSE(r->ok);
  EXPECT_EQ(r->driver, "refused");
  EXPECT_THAT(r->diagnostics, HasSubstr("[host_include]"));
}

// The sandbox on its own, each kind that works here: a trusted host compile (no include rules) that
// names the dotenv file cannot open it, and its text appears nowhere; good compiles still work.
class EachSandbox : public ::testing::TestWithParam<SandboxMode> {};

TEST_P(EachSandbox, HidesHostFilesFromTheCompiler) {
  const SandboxKind kind = GetParam() == SandboxMode::Bubblewrap ? SandboxKind::Bubblewrap : SandboxKind::Landlock;
  if (!find_program("g++")) GTEST_SKIP() << "SKIPPED: needs g++";
  if (!sandbox_works(kind)) GTEST_SKIP() << "SKIPPED: " << to_string(kind) << " does not work here";
  TempDir t;
  const std::string env = write_dotenv(t).string();
  CompileOptions o;
  o.cache_dir = t.path / "cache";
  o.sandbox = GetParam();
  auto r = compile_host_shared("#include \"" + env + "\"\nint f() { return 0; }\n", "reference.cpp", o);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_FALSE(r->ok) << r->log;
  EXPECT_THAT(r->log, ::testing::AnyOf(HasSubstr("No such file"), HasSubstr("Permission denied"))) << r->log;
  EXPECT_THAT(r->log + r->diagnostics, Not(HasSubstr(kSecret)));
  r = compile_host_shared("#include \"/etc/passwd\"\nint f() { return 0; }\n", "reference.cpp", o);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_FALSE(r->ok);
  EXPECT_THAT(r->log, Not(HasSubstr("root:")));
  r = compile_host_shared("#include <cmath>\nextern \"C\" double f(double x) { return std::sqrt(x); }\n",
                          "reference.cpp", o);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->ok) << r->log;
}

TEST_P(EachSandbox, ACandidateCompilesInside) {
  const SandboxKind kind = GetParam() == SandboxMode::Bubblewrap ? SandboxKind::Bubblewrap : SandboxKind::Landlock;
  KEVO_REQUIRE_NVCC(nvcc);
  if (!sandbox_works(kind)) GTEST_SKIP() << "SKIPPED: " << to_string(kind) << " does not work here";
  TempDir t;
  CompileOptions o;
  o.nvcc = nvcc;
  o.cache_dir = t.path / "cache";
  o.sandbox = GetParam();
  auto r = compile_cuda_shared(
      "#include <kevo/kernel.h>\n#include <cuda_fp16.h>\n__global__ void k(float* y) { y[0] = 1; }\n"
      "KEVO_EXPORT int kevo_forward(const kevo_args* a) {\n  k<<<1, 1, 0, a->stream>>>((float*)a->outputs[0].data);\n"
      "  return 0;\n}\n",
      "candidate.cu", o);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->ok) << r->log;
  EXPECT_TRUE(fs::exists(r->so_path));
}

INSTANTIATE_TEST_SUITE_P(Kinds, EachSandbox, ::testing::Values(SandboxMode::Bubblewrap, SandboxMode::Landlock),
                         [](const auto& info) {
                           return std::string(info.param == SandboxMode::Bubblewrap ? "bubblewrap" : "landlock");
                         });

// Had a host file been read anyway, its lines stay out of the diagnostics: only the candidate's,
// kevo's, the toolkit's and the system's files are quoted.
TEST(HostFiles, DiagnosticsQuoteOnlyTheCandidatesFiles) {
  const std::string log =
      "/home/u/project/.env(1): error: identifier \"OPENAI_API_KEY\" is undefined\n"
      "  OPENAI_API_KEY=sk-kevo-test-secret-4242\n"
      "  ^\n\n"
      "/etc/passwd:1:5: error: 'root' does not name a type\n"
      "    1 | root:x:0:0:root:/root:/bin/bash\n"
      "/tmp/kevo-xyz/kevo_src.cu(7): error: identifier \"undefined_thing\" is undefined\n"
      "    y[i] = undefined_thing;\n"
      "           ^\n\n"
      "/usr/include/c++/12/bits/stl_vector.h:42:3: error: no matching function\n";
  std::string d = trim_diagnostics(log, "candidate.cu");
  EXPECT_THAT(d, Not(HasSubstr(kSecret)));
  EXPECT_THAT(d, Not(HasSubstr("root:x")));
  EXPECT_THAT(d, HasSubstr("/home/u/project/.env: error: its text is not shown"));
  EXPECT_THAT(d, HasSubstr("candidate.cu(7): error: identifier \"undefined_thing\" is undefined"));
  EXPECT_THAT(d, HasSubstr("y[i] = undefined_thing;"));
  EXPECT_THAT(d, HasSubstr("stl_vector.h(42): error: no matching function"));
}

TEST(HostFiles, HeaderNames) {
  EXPECT_TRUE(is_plain_header_name("cuda_fp16.h"));
  EXPECT_TRUE(is_plain_header_name("cuda/std/atomic"));
  EXPECT_TRUE(is_plain_header_name("c++/12/vector"));
  EXPECT_FALSE(is_plain_header_name("/etc/passwd"));
  EXPECT_FALSE(is_plain_header_name("../x.h"));
  EXPECT_FALSE(is_plain_header_name("a/../../x.h"));
  EXPECT_FALSE(is_plain_header_name("a//b.h"));
  EXPECT_FALSE(is_plain_header_name("a b.h"));
  EXPECT_FALSE(is_plain_header_name(""));
}
