"""A reference file's sizes, found by running its top level (docs/INTEROP.md, "Sizes").

A size is a top-level name that a plain assignment binds to a positive integer computed from
literals alone: ``N = 16``, ``N = 2048 * 2``, ``depth, height, width = 32, 128, 128``,
``height = width = 256``; and each integer of a tuple built from literals alone
(``input_shape = (32768,)`` gives the size ``input_shape_0``). Names computed from other sizes
(``input_shape = (num_classes,)``, ``out = 2 * dim``) are not sizes of their own: they follow.

Overrides are applied by evaluating the file: its top-level statements run one at a time, and right
after a statement binds an overridden name, the name (or the tuple element) is given its new value.
Every later statement, and get_inputs()/get_init_inputs() when they are called, sees the new value,
however the size was written. No source text is rewritten.
"""

import ast


class SizeError(Exception):
    """An override names no size of the file."""


def _bound_names(target):
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        out = []
        for t in target.elts:
            out += _bound_names(t.value if isinstance(t, ast.Starred) else t)
        return out
    return []  # attributes, subscripts: not module names


def _assign_parts(node):
    """(names bound, value expression) of a top-level assignment; ([], None) otherwise."""
    if isinstance(node, ast.Assign):
        names = []
        for t in node.targets:
            names += _bound_names(t)
        return names, node.value
    if isinstance(node, ast.AnnAssign) and node.value is not None:
        return _bound_names(node.target), node.value
    if isinstance(node, ast.AugAssign):
        return _bound_names(node.target), node.value
    return [], None


def _is_size_int(v):
    return type(v) is int and v > 0


def _literal_only(expr):
    """True when an expression refers to no name at all (``2048 * 2``, ``(3, 5, 7)``)."""
    return not any(isinstance(n, ast.Name) for n in ast.walk(expr))


def size_key(name, index):
    return name if index is None else f"{name}_{index}"


class TopLevel:
    """Runs a parsed file's top level statement by statement, applying size overrides."""

    def __init__(self, tree, path):
        self.tree = tree
        self.path = path

    def run(self, ns, overrides=None):
        """Executes the file in `ns`; returns the sizes found {key: value}, in file order.
        `overrides` {key: int} must name sizes of the file (SizeError otherwise)."""
        overrides = dict(overrides or {})
        slots = {}  # key -> (name, index); what an override sets
        literal = {}  # name -> whether its last binding was computed from literals only
        for node in self.tree.body:
            code = compile(ast.Module(body=[node], type_ignores=[]), self.path, "exec")
            exec(code, ns)
            names, value = _assign_parts(node)
            for name in names:
                literal[name] = value is not None and _literal_only(value) and not isinstance(node, ast.AugAssign)
                for key in [k for k, (n, _) in slots.items() if n == name]:
                    del slots[key]
                v = ns.get(name)
                if _is_size_int(v):
                    slots[name] = (name, None)
                elif isinstance(v, tuple) and v and all(type(e) is int for e in v):
                    for i, e in enumerate(v):
                        if e > 0:
                            slots[size_key(name, i)] = (name, i)
                self._apply(ns, name, slots, overrides)
        unknown = sorted(k for k in overrides if k not in slots)
        if unknown:
            raise SizeError(
                f"{self.path}: cannot set {', '.join(unknown)}: no top-level size of that name (sizes "
                f"are top-level names bound to positive integers, such as 'batch_size = 16', "
                f"'N = 2048 * 2' or 'depth, height, width = 16, 32, 32')")
        return {k: ns[n] if i is None else ns[n][i]
                for k, (n, i) in slots.items() if literal.get(n)}

    @staticmethod
    def _apply(ns, name, slots, overrides):
        for key, (n, i) in slots.items():
            if n != name or key not in overrides:
                continue
            v = int(overrides[key])
            if i is None:
                ns[name] = v
            else:
                t = list(ns[name])
                t[i] = v
                ns[name] = tuple(t)
