# A GRU returning its final hidden state (the state attribute is used as given, not reassigned).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers=3):
        super().__init__()
        self.gru = nn.GRU(input_size, hidden_size, num_layers, batch_first=False)
        self.h0 = torch.randn((num_layers, batch, hidden_size))

    def forward(self, x):
        _, h_n = self.gru(x, self.h0.to(x.device))
        return h_n


batch = 3
steps = 8
input_size = 9
hidden_size = 13
num_layers = 3


def get_inputs():
    return [torch.randn(steps, batch, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_layers]
