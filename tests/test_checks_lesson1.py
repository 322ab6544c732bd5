"""Lesson 1's checks pass the reference solutions and catch each common mistake with a message
that names the case and the usual cause."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

import minigrad
from minigrad.course import checks
from minigrad.course.checks import CheckFailed
from minigrad.course.checks import lesson1 as L1
from minigrad.course import exercise_cells, read_notebook

ROOT = Path(__file__).resolve().parents[1]
SOLUTION = ROOT / "solutions" / "01_from_scalars_to_tensors.ipynb"


@pytest.fixture(scope="module")
def sol() -> dict:
    """The notebook's own exercise cells, run in one namespace: the reference solution."""
    ns: dict = {"np": np, "__name__": "__main__"}
    for cell in exercise_cells(read_notebook(SOLUTION)).values():
        exec(compile(cell.source, "<exercise>", "exec"), ns)
    return ns


def fails(check, *args, match: str) -> str:
    with pytest.raises(CheckFailed) as info:
        check(*args)
    msg = str(info.value)
    assert re.search(match, msg, re.S), f"message does not match {match!r}:\n{msg}"
    return msg


# --- the reference passes --------------------------------------------------------------------


def test_reference_solution_passes_every_check(sol, capsys):
    L1.tensor_class(sol["Tensor"])
    L1.topological_order(sol["topological_order"])
    L1.backward(sol["backward"])
    for name in ("add", "sub", "mul", "div", "exp", "log", "tanh", "relu"):
        getattr(L1, name)(sol[name])
    L1.binary_ops(*(sol[name] for name in L1.BINARY))     # exercises 1.4 and 1.5: the tables
    L1.unary_ops(*(sol[name] for name in L1.UNARY))
    out = capsys.readouterr().out
    assert out.count("\u2713") == 13


def test_exercises_table_matches_the_checks():
    assert list(L1.EXERCISES) == [f"1.{i}" for i in range(1, 6)]
    assert all(e["points"] > 0 and e["title"] for e in L1.EXERCISES.values())
    assert checks.lesson1 is L1


# --- minigrad's own objects and missing work are refused -------------------------------------


@pytest.mark.parametrize("check, obj", [
    (L1.tensor_class, minigrad.Tensor), (L1.exp, minigrad.exp), (L1.tanh, minigrad.tanh),
    (L1.relu, minigrad.relu), (L1.mul, np.multiply), (L1.topological_order, None),
])
def test_objects_not_written_by_the_student_are_refused(check, obj):
    fails(check, obj, match="pass your own")


def test_an_unfinished_exercise_says_so(sol):
    def mul(a, b):
        raise NotImplementedError
    fails(L1.mul, mul, match="not done yet")


# --- 1.1 the class -----------------------------------------------------------------------------


def test_tensor_that_keeps_a_list_is_caught():
    class Tensor:
        def __init__(self, data, parents=(), vjp=None):
            self.data, self.grad, self.parents, self.vjp = data, None, tuple(parents), vjp
    fails(L1.tensor_class, Tensor, match="should be a NumPy array.*np.asarray")


def test_tensor_with_integer_data_is_caught():
    class Tensor:
        def __init__(self, data, parents=(), vjp=None):
            self.data, self.grad, self.parents, self.vjp = np.asarray(data), None, tuple(parents), vjp
    fails(L1.tensor_class, Tensor, match="dtype int64; expected float64")


def test_tensor_with_zero_grad_or_list_parents_is_caught():
    class ZeroGrad:
        def __init__(self, data, parents=(), vjp=None):
            self.data = np.asarray(data, dtype=float)
            self.grad, self.parents, self.vjp = np.zeros_like(self.data), tuple(parents), vjp
    fails(L1.tensor_class, ZeroGrad, match=r"\.grad should be None")

    class ListParents:
        def __init__(self, data, parents=(), vjp=None):
            self.data = np.asarray(data, dtype=float)
            self.grad, self.parents, self.vjp = None, list(parents), vjp
    fails(L1.tensor_class, ListParents, match=r"\.parents should be the empty tuple")


# --- 1.2 topological order ---------------------------------------------------------------------


def test_recursive_topological_order_is_caught():
    def topological_order(root):
        order, seen = [], set()

        def visit(node):
            if id(node) in seen:
                return
            seen.add(id(node))
            for p in node.parents:
                visit(p)
            order.append(node)
        visit(root)
        return order
    fails(L1.topological_order, topological_order,
          match=r"chain of \d+ tanh.*RecursionError.*explicit stack")


def test_topological_order_marking_on_push_is_caught():
    """Marking a tensor visited when it is pushed puts tanh(a) before a in z = a * tanh(a)."""
    def topological_order(root):
        order, seen, stack = [], {id(root)}, [(root, False)]
        while stack:
            node, parents_done = stack.pop()
            if parents_done:
                order.append(node)
                continue
            stack.append((node, True))
            for parent in node.parents:
                if id(parent) not in seen:
                    seen.add(id(parent))
                    stack.append((parent, False))
        return order

    fails(L1.topological_order, topological_order, match=r"shortcut.*comes before its parent.*pop")


def test_topological_order_without_visited_set_is_caught():
    def topological_order(root):
        order, stack = [], [(root, False)]
        while stack:
            node, done = stack.pop()
            if done:
                order.append(node)
                continue
            stack.append((node, True))
            stack.extend((p, False) for p in node.parents)
        return order
    fails(L1.topological_order, topological_order,
          match=r"diamond.*appears 2 times.*visited")


def test_children_before_parents_is_caught():
    def topological_order(root):  # breadth first from the root: the reverse of what is needed
        order, seen, queue = [], {id(root)}, [root]
        while queue:
            node = queue.pop(0)
            order.append(node)
            for p in node.parents:
                if id(p) not in seen:
                    seen.add(id(p))
                    queue.append(p)
        return order
    fails(L1.topological_order, topological_order, match=r"comes before its parent")


def test_topological_order_that_forgets_to_return_is_caught():
    def topological_order(root):
        order = [root]  # noqa: F841
    fails(L1.topological_order, topological_order, match="returned None")


def test_topological_order_that_skips_the_leaves_is_caught():
    def topological_order(root):
        order, seen, stack = [], {id(root)}, [(root, False)]
        while stack:
            node, done = stack.pop()
            if done:
                if node.parents:
                    order.append(node)
                continue
            stack.append((node, True))
            for p in node.parents:
                if id(p) not in seen:
                    seen.add(id(p))
                    stack.append((p, False))
        return order
    fails(L1.topological_order, topological_order, match="missing")


# --- 1.3 backward ----------------------------------------------------------------------------------


def test_backward_that_overwrites_gradients_is_caught():
    def backward(self):
        self.grad = np.ones_like(self.data)
        for node in reversed(topological_order(self)):  # noqa: F821 (the check supplies it)
            if node.vjp is None:
                continue
            for parent, g in zip(node.parents, node.vjp(node.grad)):
                parent.grad = g
    fails(L1.backward, backward, match=r"z = x \* x.*x\.grad is wrong.*add it to what is there")


def test_backward_with_in_place_add_on_shared_arrays_is_caught():
    def backward(self):
        self.grad = np.ones_like(self.data)
        for node in reversed(topological_order(self)):  # noqa: F821
            if node.vjp is None:
                continue
            for parent, g in zip(node.parents, node.vjp(node.grad)):
                if parent.grad is None:
                    parent.grad = g
                else:
                    parent.grad += g
    fails(L1.backward, backward, match=r"\(x \+ y\) \+ x.*share one gradient array")


def test_backward_in_the_wrong_order_is_caught():
    def backward(self):
        self.grad = np.ones_like(self.data)
        for node in topological_order(self):  # noqa: F821  (forgot reversed)
            if node.vjp is not None:
                for parent, g in zip(node.parents, node.vjp(node.grad)):
                    parent.grad = g if parent.grad is None else parent.grad + g
    fails(L1.backward, backward, match="called with gradient None.*reversed")


def test_backward_that_runs_closures_once_per_path_is_caught():
    def backward(self):  # recursion through every path: closures run many times, stack too deep
        if self.grad is None:
            self.grad = np.ones_like(self.data)

        def push(node, g):
            if node.vjp is None:
                return
            for parent, pg in zip(node.parents, node.vjp(g)):
                parent.grad = pg if parent.grad is None else parent.grad + pg
                push(parent, pg)
        push(self, self.grad)
    fails(L1.backward, backward, match=r"ran \d+ times; it must run exactly once")


def test_backward_that_resets_leaf_gradients_is_caught():
    def backward(self):  # forgets what earlier backward calls left in .grad
        order = topological_order(self)  # noqa: F821
        for node in order:
            node.grad = None
        self.grad = np.ones_like(self.data)
        for node in reversed(order):
            if node.vjp is not None:
                for parent, g in zip(node.parents, node.vjp(node.grad)):
                    parent.grad = g if parent.grad is None else parent.grad + g
    fails(L1.backward, backward, match="both backward calls.*accumulate")


def test_backward_is_checked_with_the_reference_order_not_the_students(sol):
    """A broken topological_order in the notebook must not fail the backward check."""
    ns = dict(sol)
    exec("def topological_order(root):\n    raise NotImplementedError\n", ns)
    exec(compile(exercise_cells(read_notebook(SOLUTION))["1.3"].source, "<1.3>", "exec"), ns)
    L1.backward(ns["backward"])


# --- 1.4 - 1.12 operations ---------------------------------------------------------------------


def test_wrong_sign_in_sub_is_caught():
    def sub(a, b):
        return Tensor(a.data - b.data, (a, b), lambda g: (g, g))  # noqa: F821
    fails(L1.sub, sub, match=r"sub, case 1 of 3.*gradient for b.*expected.*got.*check the sign")


def test_swapped_mul_gradients_are_caught():
    def mul(a, b):
        return Tensor(a.data * b.data, (a, b), lambda g: (g * a.data, g * b.data))  # noqa: F821
    fails(L1.mul, mul, match=r"gradient for a.*other\* input")


def test_wrong_but_self_consistent_forward_is_caught():
    def mul(a, b):  # the sum, with the sum's correct gradients: finite differences agree
        return Tensor(a.data + b.data, (a, b), lambda g: (g, g))  # noqa: F821
    fails(L1.mul, mul, match=r"forward value is wrong.*a\.data \* b\.data")


def test_closure_that_ignores_the_output_gradient_is_caught():
    def tanh(a):
        y = np.tanh(a.data)
        return Tensor(y, (a,), lambda g: (1 - y**2,))  # noqa: F821
    fails(L1.tanh, tanh, match=r"gradient for a.*vs the scalar engine, for the output gradient")


def test_closure_that_captures_its_output_is_caught():
    def exp(a):
        out = Tensor(np.exp(a.data), (a,))  # noqa: F821
        out.vjp = lambda g: (g * out.data,)
        return out
    fails(L1.exp, exp, match="reference cycle")


def test_closure_returning_a_bare_array_is_caught():
    def log(a):
        return Tensor(np.log(a.data), (a,), lambda g: g / a.data)  # noqa: F821
    fails(L1.log, log, match=r"expected a tuple.*trailing comma")


def test_wrong_parents_and_in_place_updates_are_caught():
    def add(a, b):
        return Tensor(a.data + b.data, (b, a), lambda g: (g, g))  # noqa: F821
    fails(L1.add, add, match=r"parents should be \(a, b\)")

    def relu(a):
        a.data[a.data < 0] = 0.0
        return Tensor(a.data.copy(), (a,), lambda g: (g * (a.data > 0),))  # noqa: F821
    fails(L1.relu, relu, match="changed its input a.data in place")


def test_div_and_power_mistakes_are_caught():
    def div(a, b):
        return Tensor(a.data / b.data, (a, b),  # noqa: F821
                      lambda g: (g / b.data, g * a.data / b.data**2))
    fails(L1.div, div, match=r"gradient for b.*mind the sign")

    def power(a, p):
        return Tensor(a.data**p, (a,), lambda g: (g * a.data ** (p - 1),))  # noqa: F821
    fails(L1.power, power, match=r"power, case 1 of 3: power\(a, 3\)|p \* x\*\*\(p - 1\)")


def test_relu_that_lets_negative_gradients_through_is_caught():
    def relu(a):
        return Tensor(np.maximum(a.data, 0), (a,), lambda g: (g,))  # noqa: F821
    fails(L1.relu, relu, match="blocks it elsewhere")


def test_an_error_inside_the_students_code_is_reported_with_its_case():
    def exp(a):
        return Tensor(np.exp(a.data), (a,), lambda g: (g * y,))  # noqa: F821 (y undefined)
    msg = fails(L1.exp, exp, match=r"exp, case 1 of 3.*raised NameError")
    assert "name 'y' is not defined" in msg


def test_op_checks_use_the_reference_tensor_not_the_students(sol):
    """A broken Tensor class in the notebook must not fail the mul check."""
    ns = dict(sol)
    exec("class Tensor:\n    def __init__(self, *a, **k):\n        raise NotImplementedError\n", ns)
    exec(compile(exercise_cells(read_notebook(SOLUTION))["1.4"].source, "<1.4>", "exec"), ns)
    L1.mul(ns["mul"])


def test_recursion_limit_is_left_as_it_was(sol):
    before = sys.getrecursionlimit()
    L1.topological_order(sol["topological_order"])
    assert sys.getrecursionlimit() == before
