# A robust-kbench-style task written for kevo's tests (not from robust-kbench): y = x * w + b per
# feature, with the folder layout, Model(fn=...) and get_inputs(**sizes) of robust-kbench.
import torch
import torch.nn as nn


def forward_fn(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return x * w + b


class Model(nn.Module):
    def __init__(self, num_features: int = 16, init_method: str = "random"):
        super(Model, self).__init__()
        if init_method == "standard":
            w, b = torch.ones(num_features), torch.zeros(num_features)
        else:
            w, b = torch.randn(num_features), torch.randn(num_features)
        self.w = nn.Parameter(w)
        self.b = nn.Parameter(b)

    def forward(self, x, fn=forward_fn):
        return fn(x, self.w, self.b)


def get_inputs(batch_size: int = 8, num_features: int = 16):
    return [torch.randn(batch_size, num_features)]


input_names = ["x"]
