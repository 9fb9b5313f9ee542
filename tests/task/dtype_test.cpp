// The dtype table: every name a dtype goes by, and the lookups that read it.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "task/dtype.h"

using namespace kevo;

namespace {
constexpr DType kAll[] = {DType::F32, DType::F16, DType::BF16, DType::I32, DType::I64, DType::U8};
}

TEST(DtypeTable, EveryNameOfEveryDtype) {
  struct Row {
    DType t;
    const char *name, *torch, *cpp, *c_enum, *npy;
    size_t size;
    bool is_float;
  };
  // Written out once more on purpose: generated code, .npy files and stored tasks depend on these.
  const Row rows[] = {
      {DType::F32, "f32", "float32", "torch::kFloat32", "KEVO_F32", "<f4", 4, true},
      {DType::F16, "f16", "float16", "torch::kFloat16", "KEVO_F16", "<f2", 2, true},
      {DType::BF16, "bf16", "bfloat16", "torch::kBFloat16", "KEVO_BF16", "<u2", 2, true},
      {DType::I32, "i32", "int32", "torch::kInt32", "KEVO_I32", "<i4", 4, false},
      {DType::I64, "i64", "int64", "torch::kInt64", "KEVO_I64", "<i8", 8, false},
      {DType::U8, "u8", "uint8", "torch::kUInt8", "KEVO_U8", "|u1", 1, false},
  };
  for (const Row& r : rows) {
    const DTypeInfo& d = dtype_info(r.t);
    EXPECT_EQ(d.type, r.t);
    EXPECT_STREQ(d.name, r.name);
    EXPECT_STREQ(d.torch_name, r.torch);
    EXPECT_STREQ(d.torch_cpp, r.cpp);
    EXPECT_STREQ(d.c_enum, r.c_enum);
    EXPECT_STREQ(d.npy_descr, r.npy);
    EXPECT_EQ(d.size, r.size);
    EXPECT_EQ(d.is_float, r.is_float);
    EXPECT_STREQ(dtype_name(r.t), r.name);
    EXPECT_EQ(dtype_size(r.t), r.size);
    EXPECT_EQ(is_float(r.t), r.is_float);
  }
}

TEST(DtypeTable, ParsesKevoAndTorchNamesOnly) {
  std::set<std::string> seen;
  for (DType t : kAll) {
    EXPECT_EQ(parse_dtype(dtype_info(t).name), t);
    EXPECT_EQ(parse_dtype(dtype_info(t).torch_name), t);
    EXPECT_TRUE(seen.insert(dtype_info(t).name).second) << "two dtypes share a name";
  }
  for (const char* s : {"", "F32", "float", "bool", "<f4", "KEVO_F32", "torch.float32", "f64"})
    EXPECT_FALSE(parse_dtype(s)) << s;
}

TEST(DtypeTable, AValueOutsideTheEnumIsUnknown) {
  const auto bad = static_cast<DType>(99);
  EXPECT_STREQ(dtype_name(bad), "?");
  EXPECT_STREQ(dtype_info(bad).npy_descr, "?");
  EXPECT_EQ(dtype_size(bad), 0u);
  EXPECT_FALSE(is_float(bad));
}

// The bridge's Python side cannot read the C++ table, so it mirrors it; this keeps the two equal.
TEST(DtypeTable, TheBridgesPythonTableMirrorsIt) {
  std::ifstream in(std::string(KEVO_SOURCE_DIR) + "/python/kevo_bridge/tensors.py");
  ASSERT_TRUE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string py = ss.str();
  for (DType t : kAll) {
    const DTypeInfo& d = dtype_info(t);
    const std::string row = std::string("\"") + d.name + "\": (torch." + d.torch_name + ", np.dtype(\"" +
                            d.npy_descr + "\")),";
    EXPECT_NE(py.find(row), std::string::npos) << "tensors.py lacks " << row;
  }
}
