# expect: dtype_changed
# Computes a fp32 task in fp16 and returns the fp16 tensor.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        h = x.half()
        return torch.where(h > 0, h, torch.zeros_like(h))
