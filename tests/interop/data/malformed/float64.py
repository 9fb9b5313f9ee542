# Malformed for kevo: a float64 input (kevo has no f64 dtype).
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x + 1


n = 100


def get_inputs():
    return [torch.randn(n, dtype=torch.float64)]


def get_init_inputs():
    return []
