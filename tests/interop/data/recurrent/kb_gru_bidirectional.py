# A bidirectional GRU over a sequence-first input with its initial state as a plain attribute.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers=2, bias=True, batch_first=False):
        super().__init__()
        self.gru = nn.GRU(input_size, hidden_size, num_layers, bias, batch_first, dropout=0, bidirectional=True)
        self.h0 = torch.randn((num_layers * 2, batch, hidden_size))

    def forward(self, x):
        self.h0 = self.h0.to(x.device)
        out, _ = self.gru(x, self.h0)
        return out


batch = 4
steps = 11
input_size = 10
hidden_size = 14
num_layers = 2


def get_inputs():
    return [torch.randn(steps, batch, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_layers]
