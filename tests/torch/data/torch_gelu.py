# PyTorch reference for the bundled task tasks/gelu (dim N; input x).
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, x):
        return F.gelu(x)


N = 1 << 20


def get_inputs():
    return [torch.randn(N)]


def get_init_inputs():
    return []
