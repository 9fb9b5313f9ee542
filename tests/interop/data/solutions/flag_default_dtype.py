# expect: flag_flipped
# Changes the default dtype in __init__, before any forward: only a baseline taken before the
# solution was loaded sees it.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        torch.set_default_dtype(torch.float64)

    def forward(self, x):
        return torch.relu(x)
