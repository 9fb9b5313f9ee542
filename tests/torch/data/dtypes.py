# Every kevo dtype through the bridge: bf16, f16, i32, i64, u8 and bool inputs, two outputs.
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a, b, c, d, e, mask):
        s = a.float() * 2 + b.float() + c.float() + d.float() + e.float()
        return s.to(torch.bfloat16), torch.where(mask, s, torch.zeros_like(s)).half()


n = 100


def get_inputs():
    return [
        torch.randn(n).to(torch.bfloat16),
        torch.randn(n).half(),
        torch.randint(-5, 5, (n,), dtype=torch.int32),
        torch.randint(-5, 5, (n,), dtype=torch.int64),
        torch.randint(0, 255, (n,), dtype=torch.uint8),
        torch.rand(n) > 0.5,
    ]


def get_init_inputs():
    return []
