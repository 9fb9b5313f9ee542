# KernelBench-format problem (written for kevo's GPU interop check, in the style of KernelBench
# level 1: 2_Standard_matrix_multiplication_).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)


M = 2048
N = 2560
K = 3072


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []
