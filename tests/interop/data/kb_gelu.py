# KernelBench-format sample (written for kevo's tests): exact GELU of a 1-D tensor.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.gelu(x)


n = 65536


def get_inputs():
    return [torch.randn(n)]


def get_init_inputs():
    return []
