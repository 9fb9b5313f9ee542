// File helpers: a missing file and an unreadable path are errors of their own kinds.
#include "util/fs.h"

#include <gtest/gtest.h>

#include "support/temp_dir.h"

namespace kevo {
namespace {

TEST(Fs, ReadFileSaysNotFoundApartFromOtherFailures) {
  test::TempDir tmp;
  auto missing = read_file(tmp.path / "absent.txt");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound) << missing.error().message;
  ASSERT_TRUE(write_file_atomic(tmp.path / "present.txt", "text"));
  auto present = read_file(tmp.path / "present.txt");
  ASSERT_TRUE(present) << present.error().message;
  EXPECT_EQ(*present, "text");
  // A path through a regular file is not there either (ENOTDIR).
  auto through = read_file(tmp.path / "present.txt" / "x");
  ASSERT_FALSE(through);
  EXPECT_EQ(through.error().code, ErrorCode::kNotFound) << through.error().message;
}

TEST(Fs, AWriteThatCannotHappenIsAnIoError) {
  test::TempDir tmp;
  ASSERT_TRUE(write_file_atomic(tmp.path / "file", "x"));
  auto st = write_file_atomic(tmp.path / "file" / "below", "y");  // a file is not a folder
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, ErrorCode::kIo) << st.error().message;
}

}  // namespace
}  // namespace kevo
