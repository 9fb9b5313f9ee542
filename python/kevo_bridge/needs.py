"""What a reference needs that this Python lacks: a missing package or a newer torch, said in one
line (docs/INTEROP.md). Such a file is not wrong; it cannot run here."""

import sys

# torch functions newer than some torch releases still shipped by distributions (Debian 12: 1.13).
_TORCH_ADDED = {
    "scaled_dot_product_attention": "2.0",
    "compile": "2.0",
    "rms_norm": "2.4",
    "RMSNorm": "2.4",
    "vmap": "2.0",
    "set_default_device": "2.0",
}


def explain(e):
    """A one-line reason when `e` says the environment lacks something; None otherwise."""
    import torch
    if isinstance(e, ModuleNotFoundError) and e.name:
        top = e.name.split(".")[0]
        if top != "kevo_reference":
            return (f"needs the Python package '{top}', which {sys.executable} cannot import "
                    f"(install it for that Python, or point KEVO_PYTHON at one that has it)")
    if isinstance(e, AttributeError):
        obj, name = getattr(e, "obj", None), getattr(e, "name", None)
        owner = getattr(obj, "__name__", "") if obj is not None else ""
        if name and owner.startswith("torch"):
            since = _TORCH_ADDED.get(name)
            need = f"torch >= {since}" if since else "a newer torch"
            return f"needs {need}: {owner}.{name} does not exist in torch {torch.__version__}"
    return None
