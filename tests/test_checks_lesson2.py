"""Lesson 2's checks pass the reference solutions and catch each common mistake with a message
that names the case and the usual cause."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from conftest import fails

import minigrad
import minigrad.functional as F
from minigrad import Tensor, op
from minigrad.course import exercise_cells, read_notebook
from minigrad.course.checks import CheckFailed
from minigrad.course.checks import lesson2 as L2

ROOT = Path(__file__).resolve().parents[1]
SOLUTION = ROOT / "solutions" / "02_matmul_reductions_broadcasting.ipynb"


def notebook_namespace(extra: str = "") -> dict:
    """The notebook's exercise cells (then ``extra``) run in one namespace, as in Jupyter."""
    ns: dict = {"np": np, "op": op, "Tensor": Tensor, "minigrad": minigrad,
                "__name__": "__main__"}
    for cell in exercise_cells(read_notebook(SOLUTION)).values():
        exec(compile(cell.source, "<exercise>", "exec"), ns)
    exec(extra, ns)
    return ns


@pytest.fixture(scope="module")
def sol() -> dict:
    return notebook_namespace()


def student(source: str) -> object:
    """The function that ``source`` defines, in a notebook-like namespace (not minigrad's)."""
    ns = {"np": np, "op": op, "Tensor": Tensor, "F": F, "__name__": "__main__"}
    exec(source, ns)
    name = re.match(r"\s*def (\w+)", source).group(1)
    return ns[name]


# --- the reference passes, minigrad's own is refused -------------------------------------------


def test_reference_solution_passes_every_check(sol, capsys):
    for name in ("matmul", "sum", "reshape", "transpose", "unbroadcast", "cross_entropy"):
        getattr(L2, name)(sol[name])
    assert capsys.readouterr().out.count("\u2713") == 6


def test_exercises_table():
    assert list(L2.EXERCISES) == [f"2.{i}" for i in range(1, 7)]
    assert all(e["points"] > 0 and e["title"] for e in L2.EXERCISES.values())


@pytest.mark.parametrize("check, obj", [
    (L2.unbroadcast, minigrad.unbroadcast), (L2.matmul, minigrad.matmul),
    (L2.cross_entropy, F.cross_entropy), (L2.sum, np.sum), (L2.transpose, np.transpose),
])
def test_objects_not_written_by_the_student_are_refused(check, obj):
    fails(check, obj, match="pass your own")


def test_wrapping_minigrads_own_operation_is_caught():
    fails(L2.matmul, student("def matmul(a, b):\n    return a @ b\n"),
          match="made by minigrad's own operation")
    fails(L2.cross_entropy, student("def cross_entropy(z, t):\n    return F.cross_entropy(z, t)\n"),
          match="made by minigrad's own operation")


# --- the cross-entropy mistakes are variations of one template -------------------------------

CE_TEMPLATE = """
def cross_entropy(logits, targets):
    z = logits.data
    n = z.shape[0]
    {log_p}
    onehot = np.zeros_like(z)
    onehot[np.arange(n), targets] = 1.0
    loss = {loss}
    return op(loss, (logits,), lambda g, log_p, onehot: {grad},
              saved=(log_p, onehot))
"""
STABLE = ("shifted = z - z.max(axis=1, keepdims=True); "
          "log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))")


def ce(log_p=STABLE, loss="-(log_p * onehot).sum() / n",
       grad="g * (np.exp(log_p) - onehot) / n") -> str:
    return CE_TEMPLATE.format(log_p=log_p, loss=loss, grad=grad)


def test_cross_entropy_template_is_the_reference():
    L2.cross_entropy(student(ce()))


# --- each mistake, as a student writes it, and what its message must say -----------------------

MISTAKES = [
    # 2.1 matmul
    pytest.param(L2.matmul, "def matmul(a, b):\n"
                 "    return op(a.data @ b.data, (a, b), lambda g, x, w: (g @ w, x @ g),\n"
                 "              saved=(a.data, b.data))\n",
                 r"matmul, case 1 of 4: A \(2, 3\) @ B \(3, 4\).*raised ValueError"
                 r".*usual cause: the shapes must fit", id="matmul_wrong_transposes"),
    pytest.param(L2.matmul, "def matmul(a, b):\n"
                 "    return op(a.data @ b.data, (a, b), lambda g, x, w: (x.T @ g, g @ w.T),\n"
                 "              saved=(a.data, b.data))\n",
                 r"gradient for A has shape \(3, 4\) but the input has shape \(2, 3\)"
                 r".*only dC @ B.T has it", id="matmul_swapped_gradients"),
    pytest.param(L2.matmul, "def matmul(a, b):\n"
                 "    return op(2 * a.data @ b.data, (a, b),\n"
                 "              lambda g, x, w: (2 * g @ w.T, 2 * x.T @ g), saved=(a.data, b.data))\n",
                 r"forward value is wrong.*a\.data @ b\.data", id="matmul_wrong_self_consistent"),
    pytest.param(L2.matmul, "def matmul(a, b):\n"
                 "    return op(a.data @ b.data, (a,), lambda g: g @ b.data.T)\n",
                 r"parents are 1 tensors, not the 2 input", id="matmul_without_parents"),
    # 2.2 sum
    pytest.param(L2.sum, "def sum(x, axis=None, keepdims=False):\n"
                 "    return op(np.sum(x.data, axis=axis, keepdims=keepdims), (x,),\n"
                 "              lambda g: np.broadcast_to(g, x.shape))\n",
                 r"axis=1, keepdims=False.*raised ValueError.*np\.expand_dims",
                 id="sum_without_expand_dims"),
    pytest.param(L2.sum, "def sum(x, axis=None, keepdims=False):\n"
                 "    s = np.sum(x.data, axis=axis, keepdims=True)\n"
                 "    n = x.data.size / s.size\n"
                 "    return op(np.sum(x.data, axis=axis, keepdims=keepdims), (x,),\n"
                 "              lambda g: np.broadcast_to(np.reshape(g, s.shape), x.shape) / n)\n",
                 r"gradient for x is wrong.*no scaling", id="sum_scales_the_gradient"),
    pytest.param(L2.sum, "def sum(x, axis=None, keepdims=False):\n"
                 "    def vjp(g):\n"
                 "        return np.broadcast_to(g if axis is None else np.expand_dims(g, axis), x.shape)\n"
                 "    return op(np.sum(x.data, axis=axis), (x,), vjp)\n",
                 r"axis=None, keepdims=True.*the result has shape \(\); expected \(1, 1, 1\)",
                 id="sum_drops_the_axes"),
    # 2.3 reshape, 2.4 transpose
    pytest.param(L2.reshape, "def reshape(x, shape):\n"
                 "    return op(np.reshape(x.data, shape), (x,), lambda g: g)\n",
                 r"gradient for x has shape \(6, 4\) but the input has shape \(2, 3, 4\)",
                 id="reshape_not_undone"),
    pytest.param(L2.transpose, "def transpose(x, axes=None):\n"
                 "    return op(np.transpose(x.data, axes), (x,), lambda g: np.transpose(g, axes))\n",
                 r"axes=\(1, 2, 0\).*inverse permutation", id="transpose_same_axes_backward"),
    pytest.param(L2.transpose, "def transpose(x, axes=None):\n"
                 "    return op(x.data, (x,), lambda g: g)\n",
                 r"case 1 of 5.*forward value.*reversed", id="transpose_wrong_default"),
    # 2.5 unbroadcast
    pytest.param(L2.unbroadcast, "def unbroadcast(grad, shape):\n"
                 "    extra = grad.ndim - len(shape)\n"
                 "    grad = grad.sum(axis=tuple(range(extra)))\n"
                 "    axes = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)\n"
                 "    return grad.sum(axis=axes)\n",
                 r"the gradient for b has shape \(3,\) but b has shape \(1, 3\): "
                 r"did you unbroadcast\?.*keepdims=True", id="unbroadcast_without_keepdims"),
    pytest.param(L2.unbroadcast, "def unbroadcast(grad, shape):\n"
                 "    return grad.sum(axis=tuple(range(grad.ndim - len(shape))))\n",
                 r"b of shape \(1, 3\).*has shape \(2, 3\) but b has shape \(1, 3\).*size 1",
                 id="unbroadcast_leading_axes_only"),
    pytest.param(L2.unbroadcast, "def unbroadcast(grad, shape):\n    return grad\n",
                 r"has shape \(2, 3\) but b has shape \(3,\): did you unbroadcast.*leading axes",
                 id="unbroadcast_identity"),
    pytest.param(L2.unbroadcast, "def unbroadcast(grad, shape):\n"
                 "    extra = grad.ndim - len(shape)\n"
                 "    grad = grad.mean(axis=tuple(range(extra)))\n"
                 "    axes = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)\n"
                 "    return grad.mean(axis=axes, keepdims=True)\n",
                 r"is wrong.*a sum, not a mean", id="unbroadcast_with_a_mean"),
    pytest.param(L2.unbroadcast, "def unbroadcast(grad, shape):\n"
                 "    grad *= 1.0 if grad.shape == tuple(shape) else 2.0\n"
                 "    return grad\n",
                 "in place", id="unbroadcast_writes_into_grad"),
    # 2.6 cross-entropy
    pytest.param(L2.cross_entropy,
                 ce(log_p="p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True); log_p = np.log(p)"),
                 r"1e4.*overflow.*subtract each row's max", id="cross_entropy_naive_overflows"),
    pytest.param(L2.cross_entropy,
                 ce(log_p="log_p = z - np.log(np.exp(z).sum(axis=1, keepdims=True))"),
                 r"1e4.*overflow", id="cross_entropy_unshifted_logsumexp"),
    pytest.param(L2.cross_entropy, ce(grad="g * (np.exp(log_p) - onehot)"),
                 r"case 3 of 6: by hand.*gradient for the logits is wrong.*divide by N",
                 id="cross_entropy_gradient_not_divided"),
    pytest.param(L2.cross_entropy, ce(grad="(np.exp(log_p) - onehot) / n"),
                 r"output gradient of 0\.5.*multiply by the output gradient",
                 id="cross_entropy_ignores_output_gradient"),
    pytest.param(L2.cross_entropy,
                 ce(loss="-(log_p * onehot).sum()", grad="g * (np.exp(log_p) - onehot)"),
                 r"case 3 of 6: by hand.*the loss is wrong.*mean over rows",
                 id="cross_entropy_summed_not_averaged"),
    pytest.param(L2.cross_entropy, ce(grad="g * (onehot - np.exp(log_p)) / n"),
                 r"case 1 of 6: by hand: logits \[\[0\., 0\., 0\., 0\.\]\].*expected 0\.25, got -0\.25",
                 id="cross_entropy_sign_error"),
    pytest.param(L2.cross_entropy, "def cross_entropy(logits, targets):\n"
                 "    n = logits.shape[0]\n"
                 "    shifted = logits - Tensor(logits.data.max(axis=1, keepdims=True))\n"
                 "    log_p = shifted - shifted.exp().sum(axis=1, keepdims=True).log()\n"
                 "    return -log_p[np.arange(n), targets].mean()\n",
                 r"made by minigrad's own operation", id="cross_entropy_from_several_nodes"),
]


@pytest.mark.parametrize("check, source, match", MISTAKES)
def test_the_mistake_is_caught_with_its_message(check, source, match):
    fails(check, student(source), match=match)


# --- a mistake costs only its own exercise -------------------------------------------------------


def test_checks_use_reference_versions_of_the_other_functions():
    ns = notebook_namespace(
        "def transpose(x, axes=None):\n    raise NotImplementedError\n"
        "def unbroadcast(grad, shape):\n    return grad\n"
        "def matmul(a, b):\n"
        "    return op(a.data @ b.data, (a, b),\n"
        "              lambda g, x, w: (g @ transpose(Tensor(w)).data, transpose(Tensor(x)).data @ g),\n"
        "              saved=(a.data, b.data))\n")
    L2.matmul(ns["matmul"])                       # uses the reference transpose
    with pytest.raises(CheckFailed):
        L2.transpose(ns["transpose"])
