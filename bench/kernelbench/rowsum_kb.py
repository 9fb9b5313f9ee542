# KernelBench-format problem (written for kevo's GPU interop check, in the style of KernelBench
# level 1: 47_Sum_reduction_over_a_dimension, keepdim off).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.sum(x, dim=1)


batch_size = 1024
dim = 262144


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
