# expect: aliased_input
# Computes in place on the input and returns it: no output allocation, and the input is gone.
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return x.relu_()
