# expect: unsafe
# Computes on a stream of its own and returns without making the caller's stream wait: a harness
# that times only its current stream times nothing (CUDA-L1's first release did this).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.side = torch.cuda.Stream()

    def forward(self, x):
        with torch.cuda.stream(self.side):
            y = torch.relu(x)
            for _ in range(20):
                y = torch.relu(y)
        return y
