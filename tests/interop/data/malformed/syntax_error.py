# Malformed: a syntax error.
import torch
class Model(torch.nn.Module)
    def forward(self, x):
        return x


def get_inputs():
    return [torch.randn(4)]
