// .npy encoding and decoding (no Python needed; the bridge tests check numpy reads what we write).
#include <gtest/gtest.h>

#include <cstring>

#include "torch/npy.h"

namespace kevo::torch {
namespace {

HostTensor sample(DType t, std::vector<int64_t> shape) {
  HostTensor h = make_tensor("t", t, shape);
  for (size_t i = 0; i < h.bytes.size(); ++i) h.bytes[i] = static_cast<uint8_t>(i * 37 + 11);
  return h;
}

TEST(Npy, RoundTripsEveryDtypeAndRank) {
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::I32, DType::I64, DType::U8})
    for (auto shape : std::vector<std::vector<int64_t>>{{}, {5}, {2, 3}, {2, 1, 4}, {0, 3}}) {
      HostTensor h = sample(t, shape);
      std::string enc = npy_encode(h);
      EXPECT_EQ(enc.substr(0, 6), std::string("\x93NUMPY", 6));
      // header padded so the data starts 64-byte aligned, ending in '\n'
      size_t hlen = static_cast<uint8_t>(enc[8]) | (static_cast<uint8_t>(enc[9]) << 8);
      EXPECT_EQ((10 + hlen) % 64, 0u);
      EXPECT_EQ(enc[9 + hlen], '\n');
      auto d = npy_decode(enc, t, "mem");
      ASSERT_TRUE(d) << d.error().message;
      EXPECT_EQ(d->dtype, t);
      EXPECT_EQ(d->shape, shape);
      EXPECT_EQ(d->bytes, h.bytes);
    }
}

TEST(Npy, HeaderIsWhatNumpyWrites) {
  HostTensor h = sample(DType::F32, {2, 3});
  std::string enc = npy_encode(h);
  EXPECT_NE(enc.find("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"), std::string::npos);
  EXPECT_NE(npy_encode(sample(DType::BF16, {7})).find("'descr': '<u2'"), std::string::npos);
  EXPECT_NE(npy_encode(sample(DType::U8, {7})).find("'shape': (7,)"), std::string::npos);
}

TEST(Npy, RejectsMismatchesClearly) {
  std::string enc = npy_encode(sample(DType::F32, {4}));
  auto wrong = npy_decode(enc, DType::I32, "x.npy");
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.error().message.find("x.npy: holds '<f4' but kevo dtype i32 needs '<i4'"), std::string::npos)
      << wrong.error().message;
  auto trunc = npy_decode(enc.substr(0, enc.size() - 1), DType::F32, "x.npy");
  ASSERT_FALSE(trunc);
  EXPECT_NE(trunc.error().message.find("data bytes"), std::string::npos);
  EXPECT_EQ(trunc.error().code, ErrorCode::kParse);
  auto junk = npy_decode("not numpy at all", DType::F32, "x.npy");
  ASSERT_FALSE(junk);
  EXPECT_EQ(junk.error().code, ErrorCode::kParse);
  std::string fortran = enc;
  auto p = fortran.find("False");
  fortran.replace(p, 5, "True ");
  auto f = npy_decode(fortran, DType::F32, "x.npy");
  ASSERT_FALSE(f);
  EXPECT_NE(f.error().message.find("Fortran"), std::string::npos);
}

TEST(Npy, NumpyBoolReadsAsU8) {
  std::string enc = npy_encode(sample(DType::U8, {3}));
  enc.replace(enc.find("|u1"), 3, "|b1");
  auto d = npy_decode(enc, DType::U8, "mask.npy");
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->numel(), 3);
}

}  // namespace
}  // namespace kevo::torch
