# KernelBench-format sample (written for kevo's tests): row-wise softmax.
import torch
import torch.nn as nn


class Model(nn.Module):
    """Applies softmax over the last dimension."""

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


batch_size = 16
dim = 16384


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
