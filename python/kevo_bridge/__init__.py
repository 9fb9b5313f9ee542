"""kevo's PyTorch bridge: run a PyTorch reference on kevo's behalf (docs/INTEROP.md).

kevo starts ``python3 -m kevo_bridge`` (with PYTHONPATH pointing at kevo's python/ directory) as a
persistent subprocess and talks to it with framed JSON on the bridge's original stdin/stdout:
each message is a 4-byte little-endian length followed by that many bytes of UTF-8 JSON. Tensors
travel as .npy files in a private directory that kevo owns, or stay where they lie: buffers a
kevo-runner lends through CUDA IPC handles, used in place (ipc.py). Only the standard library,
numpy, ctypes and torch are used.
"""

PROTOCOL_VERSION = 1
