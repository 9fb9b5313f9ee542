# KernelBench-format sample (written for kevo's tests): the second input changes nothing.
import torch
import torch.nn as nn


class Model(nn.Module):
    """Returns tanh(x); y is accepted and ignored."""

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.tanh(x) + 0 * y.sum()


batch_size = 16
dim = 1024


def get_inputs():
    return [torch.randn(batch_size, dim), torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
