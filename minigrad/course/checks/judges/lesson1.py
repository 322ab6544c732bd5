"""The judges of lesson 1's checks: they compute the expected values and compare, in the
grader's process (and in a notebook, after the run), never in the grader's sandbox, which does
not hold this file. The probes and runs are in :mod:`minigrad.course.checks.lesson1`.
"""
from __future__ import annotations

import collections
from typing import Any, Callable

import numpy as np

from minigrad._utils import topological_order as _ref_topological_order
from minigrad.course.checks import assert_close, fail, show
from minigrad.course.checks.lesson1 import (  # what the judges share with the runs
    DEPTH, T, _ACCUMULATE, _accumulate_values, _as_list, _backward_cases, _graphs,
    _tensor_datas)
from minigrad.course.scalar import Var


def _ref_backward(root: T) -> None:
    root.grad = np.ones_like(root.data)
    for node in reversed(_ref_topological_order(root)):
        for parent, g in zip(node.parents, node.vjp(node.grad) if node.vjp else ()):
            parent.grad = g if parent.grad is None else parent.grad + g


def _tensor_judge(probes: dict[str, Any], outputs: dict[str, Any]) -> str:
    """1.1, judge: each tensor's .data holds the numbers it was made from, as floats."""
    datas, got = _tensor_datas(probes["seed"]), outputs["datas"]
    if len(got) != len(datas):
        fail("Tensor", f"expected {len(datas)} tensors' data; got {len(got)}")
    for data, d in zip(datas, got):
        case, want = f"Tensor, case Tensor({show(data)})", np.asarray(data, dtype=np.float64)
        if np.shape(d) != want.shape:
            fail(case, f".data has shape {np.shape(d)}; expected {want.shape}")
        assert_close(d, want, case, ".data")
    return ("Tensor: .data is a float64 array, .grad starts as None, .parents is a tuple of the "
            f"tensors passed in, .vjp is stored ({len(datas) + 1} cases)")


def _check_order(case: str, got: Any, nodes: list[T]) -> None:
    """That ``got`` has each tensor of ``nodes`` once, after all its parents (linear work)."""
    got = _as_list(case, got)
    ids = [id(t) for t in got]
    if len(got) > len(nodes) or len(set(ids)) != len(ids):
        dup_id, times = collections.Counter(ids).most_common(1)[0]
        dup = next(t for t in got if id(t) == dup_id)
        fail(case, f"the order has {len(got)} entries for {len(nodes)} tensors"
                   + (f"; {dup!r} appears {times} times" if times > 1 else ""),
             "mark each tensor as visited (a set of id(tensor)) and never add it twice; "
             "a tensor used by several others is reached once per path")
    seen = set(ids)
    missing = [t for t in nodes if id(t) not in seen]
    if missing:
        fail(case, f"{len(missing)} of the {len(nodes)} tensors are missing, e.g. {missing[0]!r}",
             "follow .parents all the way down to the leaves; include the root itself")
    wanted = {id(t) for t in nodes}
    extra = [t for t in got if id(t) not in wanted]
    if extra:
        fail(case, f"{extra[0]!r} is not part of this graph")
    pos = {id(t): i for i, t in enumerate(got)}
    for t in got:
        for p in t.parents:
            if pos[id(p)] > pos[id(t)]:
                fail(case, f"{t!r} (position {pos[id(t)]}) comes before its parent {p!r} "
                           f"(position {pos[id(p)]})",
                     "append a tensor only after all its parents are in the list: push it "
                     "back on the stack with a flag 'parents done', then push its parents; "
                     "mark a tensor visited when you pop it, not when you push it (a tensor "
                     "pushed early by one child may be reached again through another)")


def _order_judge(probes: dict[str, Any], outputs: dict[str, Any]) -> str:
    """1.2, judge: each order has every tensor once, after all its parents."""
    graphs, orders = _graphs(probes["seed"]), outputs["orders"]
    if len(orders) != len(graphs):
        fail("topological_order", f"expected {len(graphs)} orders; got {len(orders)}")
    outside = T([0.0], name="a tensor from outside this graph")
    for (name, (_, nodes)), order in zip(graphs.items(), orders):
        _check_order(f"topological_order, case '{name}'", [
            nodes[i] if isinstance(i, int) and 0 <= i < len(nodes) else outside for i in order],
            nodes)
    return (f"topological_order: each tensor once, after its parents, on {len(graphs) - 1} "
            f"graphs (a node reused 65536 ways and a random graph included) and a {DEPTH}-deep "
            "chain (no recursion)")


def _backward_judge(probes: dict[str, Any], outputs: dict[str, Any]) -> str:
    """1.3, judge: the gradients against the reference backward on the same graphs."""
    cases, results = _backward_cases(probes["seed"]), outputs["cases"]
    if len(results) != len(cases):
        fail("backward", f"expected results for {len(cases)} graphs; got {len(results)}")
    for (name, build), result in zip(cases.items(), results):
        case, nodes = f"backward, case '{name}'", build()
        _ref_backward(nodes[-1])
        leaves = [t for t in nodes if t.vjp is None]
        shared = ("two tensors share one gradient array (add returns (g, g): the same array "
                  "twice), and an in-place += changed both. Write parent.grad = parent.grad + g, "
                  "which makes a new array." if result.get("shared") is True else None)
        assert_close(_grad(result["root"]), np.ones_like(nodes[-1].data), case,
                     "the output's own .grad", shared or
                     "start with self.grad = np.ones_like(self.data): d(output)/d(output) = 1")
        if len(result["leaves"]) != len(leaves):
            fail(case, f"expected {len(leaves)} leaves' gradients; got {len(result['leaves'])}",
                 shared)
        for got, want in zip(result["leaves"], leaves):
            assert_close(_grad(got), want.grad, case, f"{want.name}.grad", shared or
                         "a tensor used more than once gets a gradient from every use: add it "
                         "to what is there (parent.grad = parent.grad + g), do not overwrite it")
    xv, yv = _accumulate_values(probes["seed"])
    assert_close(_grad(outputs["accumulated"]), yv + np.exp(xv), f"backward, case '{_ACCUMULATE}'",
                 "x.grad",
                 "gradients accumulate: a leaf that already has a .grad gets the new one added")
    return (f"backward: output seeded with ones, each closure run once, gradients of reused "
            f"tensors added up ({len(cases) + 1} graphs, a 50-times-reused x and a "
            f"{DEPTH}-deep chain included)")


def _grad(value: Any) -> Any:
    """A gradient as it came back: None stays None (assert_close says so), a description of
    something that is not an array is shown as it is."""
    return value["not an array"] if isinstance(value, dict) and "not an array" in value else value


def _var_elementwise(var_fn: Callable[..., Var], arrays: list[np.ndarray]
                     ) -> tuple[np.ndarray, list[np.ndarray]]:
    """Run ``var_fn`` on scalar Vars element by element: (values, d value / d input_k)."""
    value, local = np.zeros(arrays[0].shape), [np.zeros(arrays[0].shape) for _ in arrays]
    for i in np.ndindex(arrays[0].shape):
        vs = [Var(float(a[i])) for a in arrays]
        out = var_fn(*vs)
        out.backward()
        value[i] = out.data
        for k, v in enumerate(vs):
            local[k][i] = v.grad
    return value, local


def _scalar(var_fn: Callable[..., Var]) -> Callable[..., tuple[np.ndarray, list[np.ndarray]]]:
    """An operation's reference (see :class:`~minigrad.course.checks.table.Operation`): the
    scalar engine, element by element (the arguments after the arrays are numbers)."""
    def reference(*args: Any) -> tuple[np.ndarray, list[np.ndarray]]:
        arrays = [a for a in args if isinstance(a, np.ndarray)]
        return _var_elementwise(lambda *vs: var_fn(*vs, *args[len(arrays):]), arrays)
    return reference


add_reference = _scalar(lambda a, b: a + b)
sub_reference = _scalar(lambda a, b: a - b)
mul_reference = _scalar(lambda a, b: a * b)
div_reference = _scalar(lambda a, b: a / b)
exp_reference = _scalar(lambda a: a.exp())
log_reference = _scalar(lambda a: a.log())
tanh_reference = _scalar(lambda a: a.tanh())
relu_reference = _scalar(lambda a: a.relu())
power_reference = _scalar(lambda a, p: a ** p)
