// kevo candidate ABI. A candidate is one .cu file that includes this header and defines
//
//   KEVO_EXPORT int kevo_forward(const kevo_args* a);
//
// kevo calls it with device pointers to the inputs and to preallocated outputs. Launch every
// kernel on a->stream and return without synchronizing; return 0 on success, nonzero on error.
// Do not allocate per call (use a->workspace), create streams or threads, or touch files.
// Tensors are in task.toml order. stride[] is in elements; outputs are contiguous (row-major).
#pragma once
#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#define KEVO_ABI_VERSION 1
#define KEVO_MAX_DIMS 8
#define KEVO_EXPORT extern "C" __attribute__((visibility("default")))

typedef enum {
  KEVO_F32 = 0,   // float
  KEVO_F16 = 1,   // __half
  KEVO_BF16 = 2,  // __nv_bfloat16
  KEVO_I32 = 3,   // int32_t
  KEVO_I64 = 4,   // int64_t
  KEVO_U8 = 5     // uint8_t
} kevo_dtype;

typedef struct {
  void* data;                      // device pointer
  kevo_dtype dtype;
  int ndim;
  int64_t shape[KEVO_MAX_DIMS];
  int64_t stride[KEVO_MAX_DIMS];   // in elements
} kevo_tensor;

typedef struct {
  int abi_version;                 // KEVO_ABI_VERSION
  const kevo_tensor* inputs;  int num_inputs;
  kevo_tensor* outputs;       int num_outputs;
  const double* scalars;      int num_scalars;  // task.toml [[scalars]] order
  const int64_t* dims;        int num_dims;     // named dimensions, task.toml `dims` order
  void* workspace;            size_t workspace_bytes;  // scratch, contents undefined
  cudaStream_t stream;         // launch everything here
} kevo_args;

// Numel of a tensor.
static inline int64_t kevo_numel(const kevo_tensor* t) {
  int64_t n = 1;
  for (int i = 0; i < t->ndim; ++i) n *= t->shape[i];
  return n;
}
