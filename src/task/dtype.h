// Element types a task can declare, and host-side conversions to and from double.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kevo {

// Values match kevo_dtype in include/kevo/kernel.h.
enum class DType : int { F32 = 0, F16 = 1, BF16 = 2, I32 = 3, I64 = 4, U8 = 5 };

std::optional<DType> parse_dtype(std::string_view s);
const char* dtype_name(DType t);
size_t dtype_size(DType t);
bool is_float(DType t);

// IEEE half and bfloat16 conversions, round to nearest even.
uint16_t float_to_half(float f);
float half_to_float(uint16_t h);
uint16_t float_to_bf16(float f);
float bf16_to_float(uint16_t h);

// Element i of a buffer of type t, as double; and the reverse (rounding / saturating ints).
double load_as_double(const void* data, DType t, size_t i);
void store_from_double(void* data, DType t, size_t i, double v);

}  // namespace kevo
