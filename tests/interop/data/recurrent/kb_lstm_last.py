# A stacked LSTM whose initial states are plain tensor attributes (neither parameters nor
# buffers), moved to the input's device inside forward, as KernelBench level 3 writes them.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers, output_size):
        super().__init__()
        self.h0 = torch.randn((num_layers, batch, hidden_size))
        self.c0 = torch.randn((num_layers, batch, hidden_size))
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers, batch_first=True)
        self.head = nn.Linear(hidden_size, output_size)

    def forward(self, x):
        self.h0 = self.h0.to(x.device)
        self.c0 = self.c0.to(x.device)
        seq, _ = self.lstm(x, (self.h0, self.c0))
        return self.head(seq[:, -1, :])


batch = 6
steps = 9
input_size = 20
hidden_size = 24
num_layers = 2
output_size = 5


def get_inputs():
    return [torch.randn(batch, steps, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_layers, output_size]
