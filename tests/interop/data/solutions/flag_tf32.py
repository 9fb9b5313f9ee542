# expect: flag_flipped
# Switches matmuls to TF32 for everything that runs after it (the reference included).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
        return torch.relu(x)
