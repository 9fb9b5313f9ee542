"""Compile time of the same kernel as a PyTorch extension (torch.utils.cpp_extension.load_inline),
the way common harnesses build every candidate. Prints one line: LOAD_INLINE_SECONDS <s>."""
import os, sys, tempfile, time
import torch
from torch.utils.cpp_extension import load_inline

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
src = open(sys.argv[1]).read()
wrapper = r'''
#include <torch/extension.h>
torch::Tensor run(torch::Tensor x) {
  auto y = torch::empty_like(x);
  kevo_tensor in{}, out{};
  in.data = x.data_ptr(); in.dtype = KEVO_F32; in.ndim = 2;
  in.shape[0] = x.size(0); in.shape[1] = x.size(1); in.stride[0] = x.size(1); in.stride[1] = 1;
  out = in; out.data = y.data_ptr();
  kevo_args a{}; a.abi_version = KEVO_ABI_VERSION; a.inputs = &in; a.num_inputs = 1;
  a.outputs = &out; a.num_outputs = 1; int64_t dims[2] = {x.size(0), x.size(1)};
  a.dims = dims; a.num_dims = 2; a.stream = 0;
  kevo_forward(&a);
  return y;
}
'''
build = tempfile.mkdtemp(prefix="kevo-load-inline-")
t0 = time.time()
mod = load_inline(name="kevo_bench_ext", cpp_sources="torch::Tensor run(torch::Tensor x);",
                  cuda_sources=src + wrapper, functions=["run"], build_directory=build,
                  extra_include_paths=[os.path.join(root, "include")],
                  extra_cuda_cflags=["-O3", "-arch=sm_90"], verbose=False)
dt = time.time() - t0
x = torch.randn(64, 1000, device="cuda")
ok = torch.allclose(mod.run(x), torch.softmax(x, dim=1), atol=1e-5)
print(f"LOAD_INLINE_SECONDS {dt:.2f} correct={ok}")
