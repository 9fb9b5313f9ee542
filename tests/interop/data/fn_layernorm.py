# Functional-format sample (written for kevo's tests), in the style of the AI CUDA Engineer's
# functional rewrites: Model holds the parameters, module_fn computes.
import torch
import torch.nn as nn
import torch.nn.functional as F


def module_fn(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float) -> torch.Tensor:
    return F.layer_norm(x, (x.shape[-1],), weight, bias, eps)


class Model(nn.Module):
    def __init__(self, features, eps):
        super().__init__()
        ln = nn.LayerNorm(features)
        self.weight = nn.Parameter(ln.weight.detach().clone())
        self.bias = nn.Parameter(ln.bias.detach().clone())
        self.eps = eps

    def forward(self, x, fn=module_fn):
        return fn(x, self.weight, self.bias, self.eps)


batch_size = 64
features = 1024
eps = 1e-5


def get_inputs():
    return [torch.randn(batch_size, features)]


def get_init_inputs():
    return [features, eps]
