"""The core a student reads in one sitting (issue 26 item 1), held to its budget.

``minigrad/tensor.py`` is at most :data:`BUDGET` lines as ``wc -l`` counts them (docstrings and
comments included), defines ``Tensor``, ``op``, ``backward``, ``no_grad`` and the operations the
lessons build, and enters the fast path of fused gradient buffers through one hook. The
operations that moved to the family modules are still methods of ``Tensor``, functions of
``minigrad`` and importable from ``minigrad.tensor`` (the paths of before). Reads the source
with ``ast`` and imports the package once: well under a second.
"""
from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import minigrad
import minigrad.broadcast

CORE = Path(__file__).resolve().parents[2] / "minigrad" / "tensor.py"
BUDGET = 600
SOURCE = CORE.read_text("utf-8")
TREE = ast.parse(SOURCE)
ENGINE = importlib.import_module("minigrad.tensor")  # the module (minigrad.tensor: a function)

#: What the lessons build, as the core spells it.
LESSON_METHODS = ["__add__", "__sub__", "__mul__", "__truediv__", "__neg__", "__pow__",
                  "__matmul__", "exp", "log", "tanh", "relu", "sum", "reshape", "transpose",
                  "__getitem__", "backward"]


def top_level() -> dict[str, ast.AST]:
    return {n.name: n for n in TREE.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}


def tensor_class() -> ast.ClassDef:
    node = top_level()["Tensor"]
    assert isinstance(node, ast.ClassDef)
    return node


def test_the_core_fits_its_budget():
    lines = len(SOURCE.splitlines())
    assert lines <= BUDGET, f"minigrad/tensor.py has {lines} lines; the budget is {BUDGET}"


def test_the_core_defines_the_engine():
    names = top_level()
    for name in ("Tensor", "op", "no_grad", "enable_grad", "is_grad_enabled", "matmul",
                 "_accumulate_grad"):
        assert name in names, f"the core does not define {name}"
    methods = {n.name: n for n in tensor_class().body if isinstance(n, ast.FunctionDef)}
    assigned = {t.id for n in tensor_class().body if isinstance(n, ast.Assign)
                for t in n.targets if isinstance(t, ast.Name)}
    missing = [m for m in LESSON_METHODS if m not in methods and m not in assigned]
    assert not missing, f"the core lacks the lesson operations {missing}"
    assert ENGINE.unbroadcast is minigrad.broadcast.unbroadcast  # the core's, from below it


def test_backward_is_short_and_documents_its_order():
    backward = next(n for n in tensor_class().body
                    if isinstance(n, ast.FunctionDef) and n.name == "backward")
    assert backward.end_lineno is not None
    assert backward.end_lineno - backward.lineno + 1 <= 60
    doc = ast.get_docstring(TREE) or ""
    assert "The order of backward()" in doc and "topological_order" in doc


def test_the_fast_path_is_entered_through_one_hook():
    calls = [n for n in ast.walk(TREE) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Name) and n.func.id == "_store_in_buffer"]
    assert len(calls) == 1, "the core calls the gradient-buffer fast path in one place"
    buffers = [n for n in TREE.body if isinstance(n, ast.ImportFrom) and n.module == "grad_buffers"]
    assert sorted(a.name for n in buffers for a in n.names) == ["gradient_product", "store"]


def declared_family_methods() -> list[str]:
    """The names the core declares (for mypy) as attached by the family modules."""
    block = next(n for n in tensor_class().body if isinstance(n, ast.If))
    return sorted({t.id for n in ast.walk(block) if isinstance(n, ast.Assign)
                   for t in n.targets if isinstance(t, ast.Name)} - {"_family", "_pair"})


def test_every_declared_family_method_is_attached():
    names = declared_family_methods()
    assert len(names) > 40
    missing = [n for n in names if n not in minigrad.Tensor.__dict__]
    assert not missing, f"declared in the core but attached by no family module: {missing}"


@pytest.mark.parametrize("name", sorted(ENGINE._MOVED) + sorted(ENGINE.__all__) +
                         ["_tensor_arg", "_axes", "_axis_index", "_reduce_args", "_host_values"])
def test_the_old_import_paths_still_work(name):
    namespace: dict[str, object] = {}
    exec(f"from minigrad.tensor import {name}", namespace)  # noqa: S102 - the path under test
    if hasattr(minigrad, name):
        assert namespace[name] is getattr(minigrad, name)


def test_an_unknown_name_is_still_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        ENGINE.nothing_here  # noqa: B018
