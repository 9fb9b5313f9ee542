// Element types a task can declare, every name each goes by (one table), and host-side
// conversions to and from double.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kevo {

// Values match kevo_dtype in include/kevo/kernel.h.
enum class DType : int { F32 = 0, F16 = 1, BF16 = 2, I32 = 3, I64 = 4, U8 = 5 };

// One row per dtype with every name it goes by, so kevo, the PyTorch bridge, .npy files and
// generated code cannot disagree (python/kevo_bridge/tensors.py mirrors it on the Python side).
struct DTypeInfo {
  DType type;
  const char* name;        // kevo's, in task.toml and bridge messages: "f32"
  const char* torch_name;  // torch.<torch_name>: "float32"
  const char* torch_cpp;   // the ATen scalar type in generated C++: "torch::kFloat32"
  const char* c_enum;      // include/kevo/kernel.h: "KEVO_F32"
  const char* npy_descr;   // .npy files: "<f4"; bf16 is raw '<u2' (numpy has no bfloat16)
  size_t size;             // bytes per element
  bool is_float;
};

// t's row; a value outside the enum gets a row of "?" names, size 0.
const DTypeInfo& dtype_info(DType t);

// A kevo name ("f32") or a torch name ("float32").
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
