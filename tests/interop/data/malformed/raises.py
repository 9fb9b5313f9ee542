# Malformed: get_inputs() raises.
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x * 2


def helper():
    raise ValueError("kevo-test: get_inputs is broken on purpose")


def get_inputs():
    return [helper()]


def get_init_inputs():
    return []
