"""A KernelBench solution file read as text, never run: the bridge holds the oracle, so no
candidate code may execute in its process. ``inspect`` parses the file and says whether it is a
solution (a ``class ModelNew``) and which machinery it names (load_inline, Triton, CUDA graphs,
streams), for the recheck table and the candidate runtime's plan."""

import ast

from .reference import ReferenceError_

_MARKERS = {
    "load_inline": "load_inline",
    "cpp_extension": "cpp_extension",
    "triton": "triton",
    "CUDAGraph": "cuda_graph",
    "cuda.graph": "cuda_graph",
    "Stream": "stream",
}


class SolutionError(ReferenceError_):
    """The file is not a KernelBench solution (a reference-kind error: it names the file)."""


def inspect(path):
    try:
        with open(path, "r", encoding="utf-8") as f:
            source = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise SolutionError(f"{path}: cannot read: {e}") from None
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as e:
        raise SolutionError(f"{path}: line {e.lineno}: not valid Python: {e.msg}") from None
    classes = [n.name for n in tree.body if isinstance(n, ast.ClassDef)]
    if "ModelNew" not in classes:
        raise SolutionError(f"{path}: defines no class ModelNew at its top level (a KernelBench solution does)")
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
            if isinstance(node.value, ast.Attribute):
                names.add(f"{node.value.attr}.{node.attr}")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                names.update(a.name.split("."))
            if isinstance(node, ast.ImportFrom) and node.module:
                names.update(node.module.split("."))
    uses = sorted({v for k, v in _MARKERS.items() if k in names})
    return {"classes": classes, "uses": uses}
