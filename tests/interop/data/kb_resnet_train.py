# KernelBench-format sample (written for kevo's tests): residual blocks of conv + batch norm, built
# in training mode as KernelBench's level 3 ResNets are: the batch norms normalize with the
# batch's own statistics and only update their running ones, which the outputs never read.
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(x + self.bn2(self.conv2(y)))


class Model(nn.Module):
    def __init__(self, in_channels, channels):
        super().__init__()
        self.stem = nn.Conv2d(in_channels, channels, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(channels)
        self.blocks = nn.Sequential(Block(channels), Block(channels), Block(channels))

    def forward(self, x):
        return self.blocks(torch.relu(self.bn(self.stem(x)))).mean(dim=(2, 3))


batch_size = 4
in_channels = 3
channels = 8
height = 12
width = 12


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, channels]
