# An LSTM returning its final cell state; the attribute states are reassigned in forward, and
# c0 is (as in a KernelBench level 3 problem) overwritten from h0, so c0's own values are unused.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers):
        super().__init__()
        self.h0 = torch.randn((num_layers, batch, hidden_size))
        self.c0 = torch.randn((num_layers, batch, hidden_size))
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers, batch_first=True)

    def forward(self, x):
        self.h0 = self.h0.to(x.device)
        self.c0 = self.h0.to(x.device)
        _, state = self.lstm(x, (self.h0, self.c0))
        return state[1]


batch = 5
steps = 7
input_size = 12
hidden_size = 16
num_layers = 2


def get_inputs():
    return [torch.randn(batch, steps, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_layers]
