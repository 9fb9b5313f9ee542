# expect: pass
# Captures its work once per input buffer in a CUDA graph and replays it on the current stream:
# allowed (the replay does the work every call, on the stream kevo times).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.graphs = {}

    def forward(self, x):
        key = (x.data_ptr(), tuple(x.shape))
        g = self.graphs.get(key)
        if g is None:
            out = torch.empty_like(x)
            graph = torch.cuda.CUDAGraph()
            stream = torch.cuda.current_stream()
            with torch.cuda.graph(graph, stream=torch.cuda.Stream()):
                torch.clamp(x, min=0.0, out=out)
            g = self.graphs[key] = (graph, out)
        g[0].replay()
        return g[1].clone()
