# Malformed for kevo: forward returns a dict.
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return {"y": x}


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
