# expect: early_exit
# Ends the process with status 0 from inside forward, hoping the harness reads that as a pass.
import sys

import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        sys.exit(0)
