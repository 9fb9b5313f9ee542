# expect: incorrect
# Computes a fp32 task in fp16 and casts back (CUDA-L1's level 1 problems 1 and 13 did this for a
# matmul): the dtype is right, the values are not fp32's.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x.half()).float()
