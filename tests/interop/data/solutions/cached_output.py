# expect: output_reused
# Computes once and hands back the same tensor object on every later call.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.cached = None

    def forward(self, x):
        if self.cached is None:
            self.cached = torch.relu(x)
        return self.cached
