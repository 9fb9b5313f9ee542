// Logs below are real nvcc 13.0 / g++ 12 output, captured with the source in a temp directory.
#include "compile/diagnostics.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace kevo;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

// Logs as the compiler writes them: the candidate is kevo_src.cu (.cpp for g++) in its build dir;
// a file of any other name is not the candidate's and its lines are not quoted (sandbox_test.cpp).
constexpr const char* kThreeErrors = R"(/tmp/cc/tmpx/kevo_src.cu(5): error: identifier "foo" is undefined
    if (i < n) y[i] = foo(i);
                      ^

/tmp/cc/tmpx/kevo_src.cu(6): error: identifier "undefined_var" is undefined
    y[0] = undefined_var;
           ^

/tmp/cc/tmpx/kevo_src.cu(7): error: a value of type "const char *" cannot be used to initialize an entity of type "float"
    float z = "abc";
              ^

3 errors detected in the compilation of "/tmp/cc/tmpx/kevo_src.cu".
)";

// A warning reported by the host and the device pass, then an error; and ptxas info lines.
constexpr const char* kWarningThenError = R"(kevo_src.cu(8): warning #549-D: variable "q" is used before its value is set
    y[0] = q;
           ^

Remark: The warnings can be suppressed with "-diag-suppress <warning-number>"

kevo_src.cu(9): error: identifier "bad" is undefined
    y[1] = bad;
           ^

kevo_src.cu(8): warning #549-D: variable "q" is used before its value is set
    y[0] = q;
           ^

Remark: The warnings can be suppressed with "-diag-suppress <warning-number>"

ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z2k2Pf' for 'sm_90'
ptxas info    : Function properties for _Z2k2Pf
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 4 registers, used 0 barriers
1 error detected in the compilation of "kevo_src.cu".
)";

constexpr const char* kLinkError = R"(ptxas info    : 0 bytes gmem
/usr/bin/ld: /tmp/tmpxft_00001121_00000000-11_src2.o: in function `kevo_forward':
tmpxft_00001121_00000000-6_src2.cudafe1.cpp:(.text+0x52): undefined reference to `cublasSgemm_v2'
collect2: error: ld returned 1 exit status
)";

constexpr const char* kPtxasError = R"(ptxas /tmp/tmpxft_0000119d_00000000-6_src4.ptx, line 29; error   : Unknown modifier '.instr'
ptxas /tmp/tmpxft_0000119d_00000000-6_src4.ptx, line 29; error   : Not a name of any known instruction: 'bogus'
ptxas fatal   : Ptx assembly aborted due to errors
)";

constexpr const char* kTemplateError = R"(/tmp/cc/tmpx/kevo_src.cu(1): error: name followed by "::" must be a class or namespace name
  template <typename T> __attribute__((global)) void k(T* y) { y[0] = T::missing; }
                                                                      ^
          detected during instantiation of "void k(T *) [with T=float]" at line 2

1 error detected in the compilation of "/tmp/cc/tmpx/kevo_src.cu".
)";

constexpr const char* kGccError = R"(/tmp/cc/tmpx/kevo_src.cpp: In function ‘int f()’:
/tmp/cc/tmpx/kevo_src.cpp:1:18: error: ‘x’ was not declared in this scope
    1 | int f() { return x; }
      |                  ^
)";

}  // namespace

TEST(Diagnostics, NamesTheShownFileAndLineWithExcerpt) {
  std::string d = trim_diagnostics(kThreeErrors, "candidate.cu");
  EXPECT_THAT(d, HasSubstr("candidate.cu(5): error: identifier \"foo\" is undefined"));
  EXPECT_THAT(d, HasSubstr("if (i < n) y[i] = foo(i);"));
  EXPECT_THAT(d, HasSubstr("candidate.cu(7): error: a value of type"));
  EXPECT_THAT(d, Not(HasSubstr("/tmp")));
  EXPECT_THAT(d, Not(HasSubstr("detected in the compilation")));
}

TEST(Diagnostics, ErrorsFirstWarningsDedupedNoiseDropped) {
  std::string d = trim_diagnostics(kWarningThenError, "candidate.cu");
  size_t err = d.find("candidate.cu(9): error");
  size_t warn = d.find("candidate.cu(8): warning");
  ASSERT_NE(err, std::string::npos) << d;
  ASSERT_NE(warn, std::string::npos) << d;
  EXPECT_LT(err, warn);
  EXPECT_EQ(d.find("candidate.cu(8): warning", warn + 1), std::string::npos) << "duplicate kept:\n" << d;
  EXPECT_THAT(d, Not(HasSubstr("ptxas info")));
  EXPECT_THAT(d, Not(HasSubstr("stack frame")));
  EXPECT_THAT(d, Not(HasSubstr("Remark")));
  EXPECT_THAT(d, Not(HasSubstr("kevo_src")));
}

TEST(Diagnostics, LinkErrorNamesTheSymbolAndFunction) {
  std::string d = trim_diagnostics(kLinkError, "candidate.cu");
  EXPECT_THAT(d, HasSubstr("undefined reference to `cublasSgemm_v2'"));
  EXPECT_THAT(d, HasSubstr("kevo_forward"));
  EXPECT_THAT(d, Not(HasSubstr("tmpxft")));
  EXPECT_THAT(d, Not(HasSubstr("collect2")));
}

TEST(Diagnostics, GoldsLinkErrorReadsAsBfds) {
  // nvcc's steps link with gold where it is installed (compile/nvcc_pipeline.h).
  const std::string gold =
      "/tmp/k/nvcc-steps/tmpxft_000074c8_00000000-11_kevo_src.o:tmpxft_000074c8_00000000-6_kevo_src.cudafe1.cpp:"
      "function kevo_forward: error: undefined reference to 'cublasSgemm_v2'\n"
      "collect2: error: ld returned 1 exit status\n";
  EXPECT_EQ(trim_diagnostics(gold, "candidate.cu"), trim_diagnostics(kLinkError, "candidate.cu"));
  EXPECT_EQ(trim_diagnostics(gold, "candidate.cu"),
            "link error: undefined reference to `cublasSgemm_v2' (in kevo_forward)\n");
}

TEST(Diagnostics, PtxasErrorsKeepTheMessageDropTheTempPath) {
  std::string d = trim_diagnostics(kPtxasError, "candidate.cu");
  EXPECT_THAT(d, HasSubstr("ptxas error: Unknown modifier '.instr'"));
  EXPECT_THAT(d, HasSubstr("ptxas error: Ptx assembly aborted"));
  EXPECT_THAT(d, Not(HasSubstr("tmpxft")));
}

TEST(Diagnostics, TemplateContextKeptAndKeywordsRestored) {
  std::string d = trim_diagnostics(kTemplateError, "candidate.cu");
  EXPECT_THAT(d, HasSubstr("candidate.cu(1): error"));
  EXPECT_THAT(d, HasSubstr("detected during instantiation"));
  EXPECT_THAT(d, HasSubstr("__global__ void k(T* y)"));
  EXPECT_THAT(d, Not(HasSubstr("__attribute__((global))")));
  // The caret still points at T::missing after the excerpt got shorter.
  size_t excerpt = d.find("  template");
  size_t caret = d.find('^');
  ASSERT_NE(caret, std::string::npos);
  size_t excerpt_col = d.find("T::missing", excerpt) - excerpt;
  size_t caret_col = caret - (d.rfind('\n', caret) + 1);
  EXPECT_EQ(excerpt_col, caret_col) << d;
}

TEST(Diagnostics, GccFormat) {
  std::string d = trim_diagnostics(kGccError, "reference.cpp");
  EXPECT_THAT(d, HasSubstr("reference.cpp(1): error: ‘x’ was not declared in this scope"));
  EXPECT_THAT(d, HasSubstr("1 | int f() { return x; }"));
  EXPECT_THAT(d, Not(HasSubstr("In function")));
}

TEST(Diagnostics, CapsLengthWithACountOfWhatWasLeftOut) {
  std::string log;
  for (int i = 1; i <= 60; ++i)
    log += fmt::format("kevo_src.cu({}): error: identifier \"v{}\" is undefined\n    x = v{};\n        ^\n\n", i, i, i);
  log += "kevo_src.cu(99): warning #177-D: variable \"u\" was declared but never referenced\n";
  std::string d = trim_diagnostics(log, "candidate.cu", 600);
  EXPECT_LE(d.size(), 600u);
  EXPECT_THAT(d, HasSubstr("candidate.cu(1): error"));
  EXPECT_THAT(d, Not(HasSubstr("candidate.cu(60)")));
  EXPECT_THAT(d, testing::ContainsRegex("\\([0-9]+ more errors, 1 more warning\\)"));
}

TEST(Diagnostics, UnknownFormatKeepsTheTail) {
  std::string d = trim_diagnostics("something odd happened\nnvcc died\n", "candidate.cu");
  EXPECT_THAT(d, HasSubstr("nvcc died"));
  EXPECT_EQ(trim_diagnostics("", "candidate.cu"), "");
}
