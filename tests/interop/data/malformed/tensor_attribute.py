# Malformed for kevo: the model keeps a tensor that is neither a parameter nor a buffer.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = torch.randn(8)

    def forward(self, x):
        return x * self.scale


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
