# expect: compile_error
# Builds its CUDA with load_inline inside a try and falls back to PyTorch when that fails, as most
# of CUDA-L1's solutions do: kevo reports the build, never a silent fallback.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        try:
            from torch.utils.cpp_extension import load_inline
            self.ext = load_inline(name="relu_ext", cpp_sources="", cuda_sources="", functions=[])
        except Exception:
            self.ext = None

    def forward(self, x):
        return torch.clamp(x, min=0.0)
