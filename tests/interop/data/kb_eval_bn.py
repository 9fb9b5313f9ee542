# KernelBench-format sample (written for kevo's tests): a batch norm in eval mode reads its running
# statistics (they are inputs of the task, the variance all ones), but not its batch counter; a
# 0-dim integer buffer the forward multiplies by is an input too.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.bn = nn.BatchNorm1d(channels)
        self.bn.eval()
        self.register_buffer("repeats", torch.tensor(3))

    def forward(self, x):
        return self.bn(x) * self.repeats


batch_size = 40
channels = 24


def get_inputs():
    return [torch.randn(batch_size, channels)]


def get_init_inputs():
    return [channels]
