# KernelBench-format sample (written for kevo's tests): a ReLU after a shift that no input reaches,
# so every output is 0 and a kernel that writes zeros would pass; `kevo task lint` must say so.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x - 1000.0)


n = 4096


def get_inputs():
    return [torch.randn(n)]


def get_init_inputs():
    return []
