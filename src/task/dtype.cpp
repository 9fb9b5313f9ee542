#include "task/dtype.h"

#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>

namespace kevo {

namespace {

// In enum order (dtype_info indexes it).
constexpr DTypeInfo kDTypes[] = {
    {DType::F32, "f32", "float32", "torch::kFloat32", "KEVO_F32", "<f4", 4, true},
    {DType::F16, "f16", "float16", "torch::kFloat16", "KEVO_F16", "<f2", 2, true},
    {DType::BF16, "bf16", "bfloat16", "torch::kBFloat16", "KEVO_BF16", "<u2", 2, true},
    {DType::I32, "i32", "int32", "torch::kInt32", "KEVO_I32", "<i4", 4, false},
    {DType::I64, "i64", "int64", "torch::kInt64", "KEVO_I64", "<i8", 8, false},
    {DType::U8, "u8", "uint8", "torch::kUInt8", "KEVO_U8", "|u1", 1, false},
};
constexpr DTypeInfo kUnknown{DType::F32, "?", "?", "?", "?", "?", 0, false};

constexpr bool in_enum_order() {
  for (size_t i = 0; i < std::size(kDTypes); ++i)
    if (static_cast<size_t>(kDTypes[i].type) != i) return false;
  return true;
}
static_assert(in_enum_order(), "kDTypes must list the dtypes in enum order");

}  // namespace

const DTypeInfo& dtype_info(DType t) {
  auto i = static_cast<size_t>(t);
  return i < std::size(kDTypes) ? kDTypes[i] : kUnknown;
}

std::optional<DType> parse_dtype(std::string_view s) {
  for (const DTypeInfo& d : kDTypes)
    if (s == d.name || s == d.torch_name) return d.type;
  return std::nullopt;
}

const char* dtype_name(DType t) { return dtype_info(t).name; }
size_t dtype_size(DType t) { return dtype_info(t).size; }
bool is_float(DType t) { return dtype_info(t).is_float; }

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t mant = x & 0x7fffffu;
  int32_t exp = static_cast<int32_t>((x >> 23) & 0xff);
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0));
  int32_t e = exp - 127 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - e);
    uint32_t half_mant = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half_mant & 1))) ++half_mant;
    return static_cast<uint16_t>(sign | half_mant);
  }
  uint32_t h = sign | (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) ++h;  // may carry into the exponent: correct
  return static_cast<uint16_t>(h);
}

float half_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ffu;
  uint32_t x;
  if (exp == 0) {
    if (mant == 0) {
      x = sign;
    } else {
      int e = -1;
      do { ++e; mant <<= 1; } while (!(mant & 0x400u));
      x = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    x = sign | 0x7f800000u | (mant << 13);
  } else {
    x = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

uint16_t float_to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40);  // quiet NaN
  uint32_t lsb = (x >> 16) & 1;
  x += 0x7fffu + lsb;
  return static_cast<uint16_t>(x >> 16);
}

float bf16_to_float(uint16_t h) {
  uint32_t x = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

double load_as_double(const void* data, DType t, size_t i) {
  switch (t) {
    case DType::F32: return static_cast<const float*>(data)[i];
    case DType::F16: return half_to_float(static_cast<const uint16_t*>(data)[i]);
    case DType::BF16: return bf16_to_float(static_cast<const uint16_t*>(data)[i]);
    case DType::I32: return static_cast<const int32_t*>(data)[i];
    case DType::I64: return static_cast<double>(static_cast<const int64_t*>(data)[i]);
    case DType::U8: return static_cast<const uint8_t*>(data)[i];
  }
  return 0;
}

void store_from_double(void* data, DType t, size_t i, double v) {
  switch (t) {
    case DType::F32: static_cast<float*>(data)[i] = static_cast<float>(v); return;
    case DType::F16: static_cast<uint16_t*>(data)[i] = float_to_half(static_cast<float>(v)); return;
    case DType::BF16: static_cast<uint16_t*>(data)[i] = float_to_bf16(static_cast<float>(v)); return;
    case DType::I32: static_cast<int32_t*>(data)[i] = static_cast<int32_t>(std::llround(v)); return;
    case DType::I64: static_cast<int64_t*>(data)[i] = std::llround(v); return;
    case DType::U8: static_cast<uint8_t*>(data)[i] = static_cast<uint8_t>(std::llround(v)); return;
  }
}

}  // namespace kevo
