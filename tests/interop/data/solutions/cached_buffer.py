# expect: output_reused
# A new tensor object every call, but always a view of one buffer kept across calls: an earlier
# result is overwritten behind the caller's back.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.buf = None

    def forward(self, x):
        if self.buf is None or self.buf.shape != x.shape:
            self.buf = torch.empty_like(x)
        self.buf.copy_(x).relu_()
        return self.buf[:]
