// Candidate intake: size limit, UTF-8, exactly one kevo_forward, and the exported symbol read from
// a real shared object's .dynsym.
#include "check/intake.h"

#include <gtest/gtest.h>

#include <fstream>

#include "support/temp_dir.h"
#include "util/subprocess.h"

namespace kevo {
namespace {

constexpr const char* kGood =
    "#include <kevo/kernel.h>\n"
    "__global__ void k(float* y) { y[0] = 1; }\n"
    "KEVO_EXPORT int kevo_forward(const kevo_args* a) {\n"
    "  k<<<1, 1, 0, a->stream>>>((float*)a->outputs[0].data);\n"
    "  return 0;\n"
    "}\n";

IntakeCode code_of(std::string_view src, const IntakeOptions& o = {}) {
  auto f = check_intake(src, o);
  EXPECT_TRUE(f.has_value()) << src.substr(0, 200);
  return f ? f->code : IntakeCode::NotExported;
}

TEST(Intake, AGoodCandidatePasses) {
  EXPECT_FALSE(check_intake(kGood));
  // Declarations and uses are not definitions; qualifiers may stand before the body.
  EXPECT_FALSE(check_intake(std::string("extern \"C\" int kevo_forward(const kevo_args*);\n") + kGood +
                            "static void* p = (void*)&kevo_forward; // kevo_forward(x) {\n"));
  EXPECT_FALSE(check_intake("extern \"C\" int kevo_forward(const kevo_args* a) noexcept { return 0; }"));
  EXPECT_FALSE(check_intake("int kevo_forward (\n  const kevo_args* a)\n{\n  return 0;\n}\n"));
}

TEST(Intake, SizeLimitSaysSizeAndLimit) {
  std::string big(2 << 20, ' ');
  auto f = check_intake(big);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->code, IntakeCode::TooLarge);
  EXPECT_NE(f->message.find("2097152 bytes (2.0 MiB)"), std::string::npos) << f->message;
  EXPECT_NE(f->message.find("limit of 1048576 bytes (1.0 MiB)"), std::string::npos) << f->message;
  // Before reading: a size alone.
  auto huge = check_size(uint64_t{50} << 30);
  ASSERT_TRUE(huge);
  EXPECT_NE(huge->message.find("53687091200 bytes (51200.0 MiB)"), std::string::npos) << huge->message;
  EXPECT_FALSE(check_size(1 << 20));
  // Configurable.
  EXPECT_EQ(code_of(kGood, {.max_bytes = 64}), IntakeCode::TooLarge);
  EXPECT_FALSE(check_intake(kGood, {.max_bytes = std::string_view(kGood).size()}));
}

TEST(Intake, Utf8NamesTheByteOffset) {
  std::string s = kGood;
  s.insert(30, "\xff");
  auto f = check_intake(s);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->code, IntakeCode::NotUtf8);
  EXPECT_NE(f->message.find("0xff at byte offset 30 (line 2)"), std::string::npos) << f->message;
  std::string nul = kGood;
  nul[5] = '\0';
  f = check_intake(nul);
  ASSERT_TRUE(f);
  EXPECT_NE(f->message.find("NUL byte 0x00 at byte offset 5"), std::string::npos) << f->message;
  // Valid multi-byte text (a comment in another script) passes; bad forms do not.
  EXPECT_FALSE(check_intake(std::string("// caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\n") + kGood));
  for (const char* bad : {"\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82", "\x80"})
    EXPECT_EQ(first_invalid_utf8(std::string("ab") + bad), 2u) << bad;
  EXPECT_FALSE(first_invalid_utf8("plain"));
}

TEST(Intake, RandomBytesAreAVerdictNotACrash) {
  std::string junk;
  uint32_t x = 12345;
  for (int i = 0; i < 4096; ++i) junk += static_cast<char>((x = x * 1664525 + 1013904223) >> 24);
  EXPECT_EQ(code_of(junk), IntakeCode::NotUtf8);
}

TEST(Intake, ExactlyOneKevoForward) {
  EXPECT_EQ(code_of(""), IntakeCode::Empty);
  EXPECT_EQ(code_of(" \n\t\n"), IntakeCode::Empty);
  std::string renamed = kGood;
  renamed.replace(renamed.find("kevo_forward"), 12, "kevo_forward2");
  EXPECT_EQ(code_of(renamed), IntakeCode::NoForward);
  EXPECT_EQ(code_of("// KEVO_EXPORT int kevo_forward(const kevo_args* a) { return 0; }\n"), IntakeCode::NoForward);
  EXPECT_EQ(code_of("extern \"C\" int kevo_forward(const kevo_args* a);\n"), IntakeCode::NoForward);
  auto f = check_intake(std::string(kGood) + "\n" + kGood);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->code, IntakeCode::SeveralForwards);
  EXPECT_NE(f->message.find("2 times (lines 3, 10)"), std::string::npos) << f->message;
  EXPECT_STREQ(to_string(IntakeCode::SeveralForwards), "several_kevo_forward");
}

// The size limit comes first, and what follows is linear: 1 MiB inputs of the worst shapes for
// the scanners finish (no clock here: the ctest timeout in scripts/test.sh is what a regression to
// quadratic time runs into) and give the verdict their shape calls for.
TEST(Intake, OneMebibyteInputsFinish) {
  for (std::string unit : {"kevo_forward(", "kevo_forward(((((", "a", "\"", "/*", "R\"(", "'", "#"}) {
    std::string s;
    while (s.size() + unit.size() <= (1 << 20)) s += unit;
    auto r = check_intake(s);
    EXPECT_TRUE(r.has_value()) << "unit '" << unit << "': no single kevo_forward definition, yet it passed";
  }
}

// A shared object from g++ with the given source; empty path when g++ is missing.
std::filesystem::path build_so(const std::filesystem::path& dir, const std::string& name, const std::string& src) {
  if (!find_program("g++")) return {};
  std::ofstream(dir / (name + ".cpp")) << src;
  auto r = run_process({.argv = {"g++", "-shared", "-fPIC", "-o", (dir / (name + ".so")).string(),
                                 (dir / (name + ".cpp")).string()}});
  EXPECT_TRUE(r && r->ok()) << (r ? r->err : r.error().message);
  return dir / (name + ".so");
}

TEST(Intake, ConfirmExportsReadsTheDynamicSymbols) {
  if (!find_program("g++")) GTEST_SKIP() << "SKIPPED: needs g++";
  test::TempDir tmp;
  auto good = build_so(tmp.path, "good", "extern \"C\" __attribute__((visibility(\"default\"))) int kevo_forward(const void*) { return 0; }\n");
  auto r = confirm_exports(good);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_FALSE(r->has_value());

  auto cxx = build_so(tmp.path, "cxx", "int kevo_forward(const void*) { return 0; }\n");
  r = confirm_exports(cxx);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ((*r)->code, IntakeCode::NotExported);
  EXPECT_NE((*r)->message.find("_Z12kevo_forwardPKv"), std::string::npos) << (*r)->message;
  EXPECT_NE((*r)->message.find("extern \"C\""), std::string::npos) << (*r)->message;

  auto hidden = build_so(tmp.path, "hidden",
                         "extern \"C\" __attribute__((visibility(\"hidden\"))) int kevo_forward(const void*) { return 0; }\n"
                         "extern \"C\" int kevo_forward2(const void*) { return 1; }\n");
  r = confirm_exports(hidden);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ((*r)->code, IntakeCode::NotExported);

  auto data = build_so(tmp.path, "data", "extern \"C\" int kevo_forward = 3;\n");
  r = confirm_exports(data);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->has_value()) << "a variable named kevo_forward is not a function";
}

TEST(Intake, ConfirmExportsOnBadFilesIsAnError) {
  test::TempDir tmp;
  std::ofstream(tmp.path / "text.so") << "not an elf file";
  EXPECT_FALSE(confirm_exports(tmp.path / "text.so"));
  EXPECT_FALSE(confirm_exports(tmp.path / "missing.so"));
  if (!find_program("g++")) return;
  // Every truncation of a real library is refused or read, never a crash.
  auto so = build_so(tmp.path, "t", "extern \"C\" int kevo_forward(const void*) { return 0; }\n");
  std::ifstream in(so, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (size_t cut : {size_t{16}, size_t{64}, bytes.size() / 2, bytes.size() - 1}) {
    std::ofstream(tmp.path / "cut.so", std::ios::binary) << bytes.substr(0, cut);
    (void)confirm_exports(tmp.path / "cut.so");
  }
}

}  // namespace
}  // namespace kevo
