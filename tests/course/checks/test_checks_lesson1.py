"""Lesson 1's checks pass the reference solutions and catch each common mistake with a message
that names the case and the usual cause."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest
from tests.support.checking import fails

import minigrad
from minigrad.course import checks
from minigrad.course.checks import lesson1 as L1
from minigrad.course import exercise_cells, read_notebook

ROOT = Path(__file__).resolve().parents[3]
SOLUTION = ROOT / "solutions" / "01_from_scalars_to_tensors.ipynb"


@pytest.fixture(scope="module")
def sol() -> dict:
    """The notebook's own exercise cells, run in one namespace: the reference solution."""
    ns: dict = {"np": np, "__name__": "__main__"}
    for cell in exercise_cells(read_notebook(SOLUTION)).values():
        exec(compile(cell.source, "<exercise>", "exec"), ns)
    return ns


def student(source: str) -> object:
    """The class or function that ``source`` defines, in a notebook-like namespace.

    ``Tensor`` and ``topological_order`` are left undefined: the checks put in their own.
    """
    ns = {"np": np, "__name__": "__main__"}
    exec(source, ns)
    return ns[re.search(r"^(?:def|class) (\w+)", source, re.M).group(1)]


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


# --- each mistake, as a student writes it, and what its message must say -----------------------

TENSOR_TEMPLATE = """
class Tensor:
    def __init__(self, data, parents=(), vjp=None):
        self.data = {data}
        self.grad, self.parents, self.vjp = {grad}, {parents}, vjp
"""


def tensor(data="np.asarray(data, dtype=float)", grad="None", parents="tuple(parents)") -> str:
    return TENSOR_TEMPLATE.format(data=data, grad=grad, parents=parents)


# An explicit stack that marks a tensor seen when it is *pushed* (the mistake of the first row
# that uses it); ``append`` and ``push`` vary it.
ORDER_TEMPLATE = """
def topological_order(root):
    order, seen, stack = [], {{id(root)}}, [(root, False)]
    while stack:
        node, parents_done = stack.pop()
        if parents_done:
            {append}
            continue
        stack.append((node, True))
        for parent in node.parents:
            {push}
    return order
"""
PUSH_UNSEEN = ("if id(parent) not in seen:\n                seen.add(id(parent))\n"
               "                stack.append((parent, False))")


def order(append="order.append(node)", push=PUSH_UNSEEN) -> str:
    return ORDER_TEMPLATE.format(append=append, push=push)


BACKWARD_TEMPLATE = """
def backward(self):
    self.grad = np.ones_like(self.data)
    for node in {nodes}:
        if node.vjp is None:
            continue
        for parent, g in zip(node.parents, node.vjp(node.grad)):
            {add}
"""
ADD = "parent.grad = g if parent.grad is None else parent.grad + g"


def backward(nodes="reversed(topological_order(self))", add=ADD) -> str:
    return BACKWARD_TEMPLATE.format(nodes=nodes, add=add)


def test_the_templates_with_their_defaults_pass():
    """Each row below changes one thing in a template; the tensor and backward templates
    unchanged are right (the order template's default is itself a mistake: see its row)."""
    L1.tensor_class(student(tensor()))
    L1.backward(student(backward()))


def op(name: str, args: str, forward: str, vjp: str, parents: str = "") -> str:
    """An operation as lesson 1 writes it: one line, the forward value, parents and closure."""
    parents = parents or f"({args},)"
    return f"def {name}({args}):\n    return Tensor({forward}, {parents}, lambda g: {vjp})\n"


MISTAKES = [
    # 1.1 the class
    pytest.param(L1.tensor_class, tensor(data="data"),
                 r"should be a NumPy array.*np.asarray", id="tensor_keeps_a_list"),
    pytest.param(L1.tensor_class, tensor(data="np.asarray(data)"),
                 r"dtype int64; expected float64", id="tensor_integer_data"),
    pytest.param(L1.tensor_class, tensor(grad="np.zeros_like(self.data)"),
                 r"\.grad should be None", id="tensor_zero_grad"),
    pytest.param(L1.tensor_class, tensor(parents="list(parents)"),
                 r"\.parents should be the empty tuple", id="tensor_list_parents"),
    # 1.2 topological order
    pytest.param(L1.topological_order, """
def topological_order(root):
    order, seen = [], set()

    def visit(node):
        if id(node) not in seen:
            seen.add(id(node))
            for p in node.parents:
                visit(p)
            order.append(node)
    visit(root)
    return order
""", r"chain of \d+ tanh.*RecursionError.*explicit stack", id="order_recursive"),
    # marking on push puts tanh(a) before a in z = a * tanh(a)
    pytest.param(L1.topological_order, order(),
                 r"shortcut.*comes before its parent.*pop", id="order_marks_on_push"),
    pytest.param(L1.topological_order, order(push="stack.append((parent, False))"),
                 r"diamond.*appears 2 times.*visited", id="order_without_visited_set"),
    pytest.param(L1.topological_order, order(append="if node.parents:\n"
                                                    "                order.append(node)"),
                 r"missing", id="order_skips_the_leaves"),
    pytest.param(L1.topological_order, """
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
""", r"comes before its parent", id="order_children_before_parents"),
    pytest.param(L1.topological_order, "def topological_order(root):\n    order = [root]\n",
                 r"returned None", id="order_forgets_to_return"),
    # 1.3 backward
    pytest.param(L1.backward, backward(add="parent.grad = g"),
                 r"z = x \* x.*x\.grad is wrong.*add it to what is there",
                 id="backward_overwrites_gradients"),
    pytest.param(L1.backward, backward(add="if parent.grad is None:\n"
                                           "                parent.grad = g\n"
                                           "            else:\n"
                                           "                parent.grad += g"),
                 r"\(x \+ y\) \+ x.*share one gradient array", id="backward_in_place_add"),
    pytest.param(L1.backward, backward(nodes="topological_order(self)"),
                 r"called with gradient None.*reversed", id="backward_forgets_reversed"),
    pytest.param(L1.backward, """
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
""", r"ran \d+ times; it must run exactly once", id="backward_once_per_path"),
    pytest.param(L1.backward, """
def backward(self):  # forgets what earlier backward calls left in .grad
    for node in topological_order(self):
        node.grad = None
    self.grad = np.ones_like(self.data)
    for node in reversed(topological_order(self)):
        for parent, g in zip(node.parents, node.vjp(node.grad) if node.vjp else ()):
            parent.grad = g if parent.grad is None else parent.grad + g
""", r"both backward calls.*accumulate", id="backward_resets_leaf_gradients"),
    # 1.4, 1.5 and power: the operations
    pytest.param(L1.sub, op("sub", "a, b", "a.data - b.data", "(g, g)"),
                 r"sub, case 1 of 3.*gradient for b.*expected.*got.*check the sign",
                 id="sub_wrong_sign"),
    pytest.param(L1.mul, op("mul", "a, b", "a.data * b.data", "(g * a.data, g * b.data)"),
                 r"gradient for a.*other\* input", id="mul_swapped_gradients"),
    # the sum, with the sum's correct gradients: finite differences agree
    pytest.param(L1.mul, op("mul", "a, b", "a.data + b.data", "(g, g)"),
                 r"forward value is wrong.*a\.data \* b\.data", id="mul_wrong_self_consistent"),
    pytest.param(L1.tanh, op("tanh", "a", "np.tanh(a.data)", "(1 - np.tanh(a.data) ** 2,)"),
                 r"gradient for a.*vs the scalar engine, for the output gradient",
                 id="tanh_ignores_the_output_gradient"),
    pytest.param(L1.exp, "def exp(a):\n"
                 "    out = Tensor(np.exp(a.data), (a,))\n"
                 "    out.vjp = lambda g: (g * out.data,)\n"
                 "    return out\n", r"reference cycle", id="exp_captures_its_output"),
    pytest.param(L1.log, op("log", "a", "np.log(a.data)", "g / a.data"),
                 r"expected a tuple.*trailing comma", id="log_returns_a_bare_array"),
    pytest.param(L1.add, op("add", "a, b", "a.data + b.data", "(g, g)", parents="(b, a)"),
                 r"parents should be \(a, b\)", id="add_wrong_parents"),
    pytest.param(L1.relu, "def relu(a):\n"
                 "    a.data[a.data < 0] = 0.0\n"
                 "    return Tensor(a.data.copy(), (a,), lambda g: (g * (a.data > 0),))\n",
                 r"changed its input a.data in place", id="relu_in_place"),
    pytest.param(L1.relu, op("relu", "a", "np.maximum(a.data, 0)", "(g,)"),
                 r"blocks it elsewhere", id="relu_lets_negative_gradients_through"),
    pytest.param(L1.div, op("div", "a, b", "a.data / b.data", "(g / b.data, g * a.data / b.data**2)"),
                 r"gradient for b.*mind the sign", id="div_wrong_sign"),
    pytest.param(L1.power, op("power", "a, p", "a.data**p", "(g * a.data ** (p - 1),)",
                              parents="(a,)"),
                 r"power, case 1 of 3: power\(a, 3\)|p \* x\*\*\(p - 1\)", id="power_forgets_p"),
    pytest.param(L1.exp, op("exp", "a", "np.exp(a.data)", "(g * y,)"),
                 r"exp, case 1 of 3.*raised NameError.*name 'y' is not defined",
                 id="exp_raises_inside_the_students_code"),
]


@pytest.mark.parametrize("check, source, match", MISTAKES)
def test_the_mistake_is_caught_with_its_message(check, source, match):
    fails(check, student(source), match=match)


# --- a mistake costs only its own exercise -------------------------------------------------------


def test_backward_is_checked_with_the_reference_order_not_the_students(sol):
    """A broken topological_order in the notebook must not fail the backward check."""
    ns = dict(sol)
    exec("def topological_order(root):\n    raise NotImplementedError\n", ns)
    exec(compile(exercise_cells(read_notebook(SOLUTION))["1.3"].source, "<1.3>", "exec"), ns)
    L1.backward(ns["backward"])


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
