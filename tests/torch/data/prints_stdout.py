# Not malformed: prints to stdout while loading and running (must not disturb the protocol).
import sys

import torch
import torch.nn as nn

print("hello from the reference on stdout")
print("\x05\x00\x00\x00{}{}", end="")
sys.stdout.flush()


class Model(nn.Module):
    def forward(self, x):
        print("forward says hi")
        return x * 3


size = 40


def get_inputs():
    return [torch.randn(size, 3)]


def get_init_inputs():
    return []
