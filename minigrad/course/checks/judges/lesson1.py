"""The judges of lesson1's checks: they compute the expected values and compare.

They run in the grader's process (and in a notebook, after the run), never in the grader's
sandbox, which does not hold this file (:data:`minigrad.course.grading.sandbox.GRADER_ONLY`).
The probes, the runs and the helpers both sides use are in :mod:`minigrad.course.checks.lesson1`.
"""
from __future__ import annotations

import collections
from typing import Any, Callable, Sequence

import numpy as np

from minigrad._utils import topological_order as _ref_topological_order
from minigrad.course.checks import CheckFailed, assert_close, fail, show
from minigrad.course.checks.lesson1 import (  # what the judges share with the runs
    DEPTH, T, _ACCUMULATE, _accumulate_values, _as_list, _backward_cases, _deep_chain, _graphs,
    _tensor_datas)
from minigrad.course.scalar import Var


def _ref_backward(root: T) -> None:
    root.grad = np.ones_like(root.data)
    for node in reversed(_ref_topological_order(root)):
        if node.vjp is None:
            continue
        for parent, g in zip(node.parents, node.vjp(node.grad)):
            parent.grad = g if parent.grad is None else parent.grad + g


def _tensor_judge(probes: dict[str, Any], outputs: dict[str, Any]) -> str:
    """1.1, judge: each tensor's .data holds the numbers it was made from, as floats."""
    datas = _tensor_datas(probes["seed"])
    got = outputs["datas"]
    if len(got) != len(datas):
        fail("Tensor", f"expected {len(datas)} tensors' data; got {len(got)}")
    for data, d in zip(datas, got):
        case = f"Tensor, case Tensor({show(data)})"
        want = np.asarray(data, dtype=np.float64)
        if np.shape(d) != want.shape:
            fail(case, f".data has shape {np.shape(d)}; expected {want.shape}")
        assert_close(d, want, case, ".data")
    return ("Tensor: .data is a float64 array, .grad starts as None, .parents is a tuple of the "
            f"tensors passed in, .vjp is stored ({len(datas) + 1} cases)")


def _check_order(case: str, got: Any, nodes: list[T]) -> None:
    cause_dup = ("mark each tensor as visited (a set of id(tensor)) and never add it twice; "
                 "a tensor used by several others is reached once per path")
    got = _as_list(case, got)
    ids = [id(t) for t in got]   # (counted once below: linear work, never ids.count)
    wanted = {id(t) for t in nodes}
    if len(got) > len(nodes) or len(set(ids)) != len(ids):
        counts = collections.Counter(ids)
        dup_id, times = counts.most_common(1)[0]
        dup = next(t for t in got if id(t) == dup_id)
        fail(case, f"the order has {len(got)} entries for {len(nodes)} tensors"
                   + (f"; {dup!r} appears {times} times" if times > 1 else ""),
             cause_dup)
    missing = [t for t in nodes if id(t) not in set(ids)]
    if missing:
        fail(case, f"{len(missing)} of the {len(nodes)} tensors are missing, e.g. {missing[0]!r}",
             "follow .parents all the way down to the leaves; include the root itself")
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
    graphs = _graphs(probes["seed"])
    cases = [(f"topological_order, case '{name}'", nodes) for name, (_, nodes) in graphs.items()]
    cases.append((f"topological_order, case 'a chain of {DEPTH} tanh operations'",
                  _deep_chain(DEPTH)[1]))
    orders = outputs["orders"]
    if len(orders) != len(cases):
        fail("topological_order", f"expected {len(cases)} orders; got {len(orders)}")
    outside = T([0.0], name="a tensor from outside this graph")
    for (case, nodes), order in zip(cases, orders):
        got = [nodes[i] if isinstance(i, int) and 0 <= i < len(nodes) else outside
               for i in order]
        _check_order(case, got, nodes)
    return (f"topological_order: each tensor once, after its parents, on {len(graphs)} graphs "
            f"(a node reused 65536 ways and a random graph included) and a {DEPTH}-deep chain "
            "(no recursion)")


def _backward_judge(probes: dict[str, Any], outputs: dict[str, Any]) -> str:
    """1.3, judge: the gradients against the reference backward on the same graphs."""
    check = "backward"
    cause_acc = ("a tensor used more than once gets a gradient from every use: add it to "
                 "what is there (parent.grad = parent.grad + g), do not overwrite it")
    cases = _backward_cases(probes["seed"])
    results = outputs["cases"]
    if len(results) != len(cases):
        fail(check, f"expected results for {len(cases)} graphs; got {len(results)}")
    for (name, build), result in zip(cases.items(), results):
        case = f"{check}, case '{name}'"
        want_root, want_leaves = build()
        _ref_backward(want_root)
        try:
            assert_close(_grad(result["root"]), np.ones_like(want_root.data), case,
                         "the output's own .grad",
                         "start with self.grad = np.ones_like(self.data): d(output)/d(output) = 1")
            if len(result["leaves"]) != len(want_leaves):
                fail(case, f"expected {len(want_leaves)} leaves' gradients; got "
                           f"{len(result['leaves'])}")
            for got, want in zip(result["leaves"], want_leaves):
                assert_close(_grad(got), want.grad, case, f"{want.name}.grad", cause_acc)
        except CheckFailed as e:
            if result.get("shared") is not True:
                raise
            raise CheckFailed(str(e).split("\n  usual cause:")[0] + "\n  usual cause: two "
                              "tensors share one gradient array (add returns (g, g): the same "
                              "array twice), and an in-place += changed both. Write "
                              "parent.grad = parent.grad + g, which makes a new array.") from None
    xv, yv = _accumulate_values(probes["seed"])
    assert_close(_grad(outputs["accumulated"]), yv + np.exp(xv), f"{check}, case '{_ACCUMULATE}'",
                 "x.grad",
                 "gradients accumulate: a leaf that already has a .grad gets the new one added")
    return (f"backward: output seeded with ones, each closure run once, gradients of reused "
            f"tensors added up ({len(cases) + 1} graphs, a 50-times-reused x and a "
            f"{DEPTH}-deep chain included)")


def _grad(value: Any) -> Any:
    """A gradient as it came back: None stays None (assert_close says so), a description of
    something that is not an array is shown as it is."""
    if isinstance(value, dict) and "not an array" in value:
        return value["not an array"]
    return value


def _var_elementwise(var_fn: Callable[..., Any], arrays: Sequence[np.ndarray]
                     ) -> tuple[np.ndarray, list[np.ndarray]]:
    """Run ``var_fn`` on scalar Vars element by element: (values, d value / d input_k)."""
    shape = arrays[0].shape
    value = np.zeros(shape)
    local = [np.zeros(shape) for _ in arrays]
    for i in np.ndindex(shape):
        vs = [Var(float(a[i])) for a in arrays]
        out = var_fn(*vs)
        out.backward()
        value[i] = out.data
        for k, v in enumerate(vs):
            local[k][i] = v.grad
    return value, local


def _scalar(var_fn: Callable[..., Var]) -> Callable[..., tuple[np.ndarray, list[np.ndarray]]]:
    """An operation's reference (see :class:`~minigrad.course.checks.table.Operation`): the
    scalar engine, element by element."""
    def reference(*args: Any) -> tuple[np.ndarray, list[np.ndarray]]:
        arrays = [a for a in args if isinstance(a, np.ndarray)]
        params = args[len(arrays):]
        return _var_elementwise(lambda *vs: var_fn(*vs, *params), arrays)
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
