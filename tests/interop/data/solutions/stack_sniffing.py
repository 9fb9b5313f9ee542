# expect: ok
# Tells a harness's correctness calls from its timed ones by who calls it: the frames above its
# first call are taken as "checking", and any other caller gets a cheap wrong result. Under
# KernelBench's harness (correctness trials, then a timing loop elsewhere) it would be timed doing
# nothing. Under kevo every call comes through the same frames, so it always computes: it passes,
# and its timing is of the real work.
import sys

import torch
import torch.nn as nn


def _callers():
    f, names = sys._getframe(2), []
    while f is not None:
        names.append((f.f_code.co_filename, f.f_code.co_name))
        f = f.f_back
    return tuple(names)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.checking = None

    def forward(self, x):
        who = _callers()
        if self.checking is None:
            self.checking = who
        if who != self.checking:
            return torch.empty_like(x)
        return torch.clamp(x, min=0.0)
