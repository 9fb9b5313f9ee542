# KernelBench-format sample (written for kevo's tests): a forward that reads two tensor
# attributes and then rebinds one to the other (as `self.c0 = self.h0.to(x.device)` does in
# KernelBench's LSTMs). Both are inputs; every call must start from the tensors the module was
# built with, or the next call's weights would be written into one tensor twice.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.scale = torch.randn(features)
        self.shift = torch.randn(features)

    def forward(self, x):
        y = x * self.shift
        self.shift = self.scale
        return y + self.scale


batch_size = 16
features = 40


def get_inputs():
    return [torch.randn(batch_size, features)]


def get_init_inputs():
    return [features]
