# expect: tensor_subclass
# A result with no data of its own that computes only when something reads it, so the timed call
# does no work (the pattern of a published level 1 solution).
import torch
import torch.nn as nn


class LazyResult(torch.Tensor):
    @staticmethod
    def __new__(cls, src):
        return torch.Tensor._make_wrapper_subclass(cls, src.shape, dtype=src.dtype, device=src.device)

    def __init__(self, src):
        self.src = src

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        def real(a):
            return torch.relu(a.src) if isinstance(a, LazyResult) else a
        return func(*[real(a) for a in args], **{k: real(v) for k, v in (kwargs or {}).items()})


class ModelNew(nn.Module):
    def forward(self, x):
        return LazyResult(x)
