// Fuzzes a candidate's first checks over arbitrary bytes: intake (size, UTF-8, exactly one
// kevo_forward), then, as kevo eval does for what passes intake, the static checker (the first
// byte picks its options).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "check/intake.h"
#include "check/static_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  kevo::StaticCheckOptions opts;
  opts.allow_cublas = data[0] & 1;
  opts.allow_cudnn = data[0] & 2;
  static const char* const kPrecisions[] = {"f32", "f16", "bf16", "f64"};
  opts.precision = kPrecisions[(data[0] >> 2) & 3];
  std::string_view source(reinterpret_cast<const char*>(data + 1), size - 1);
  (void)kevo::first_invalid_utf8(source);
  (void)kevo::check_intake(source);  // the static checks run on everything anyway: defence in depth
  auto findings = kevo::static_check(source, opts);
  (void)kevo::format_findings(findings);
  (void)kevo::has_unsafe(findings);
  (void)kevo::blank_comments_and_strings(source, data[0] & 16);
  return 0;
}
