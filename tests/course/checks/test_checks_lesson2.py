"""Lesson 2's checks pass the reference solutions and catch each common mistake with a message
that names the case and the usual cause."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from tests.support.checking import fails
from tests.support.split_helpers import is_plain, junk_forgeries, reshaped, zeros

import minigrad
import minigrad.functional as F
from minigrad import Tensor, op
from minigrad.course import exercise_cells, read_notebook
from minigrad.course.checks import CheckFailed, Split
from minigrad.course.checks import lesson2 as L2
from minigrad.course.grading.protocol import dumps, loads

ROOT = Path(__file__).resolve().parents[3]
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
    assert list(L2.EXERCISES) == [f"2.{i}" for i in range(1, 6)]   # 2.3: reshape and transpose
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

# One row a mistake: the rows are alike by design (duplicates pairs some of them).
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
    # 2.3 reshape and transpose (one exercise, two checks that its check cell runs together)
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
    # 2.4 unbroadcast
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
    # 2.5 cross-entropy
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


# --- the split: probe in the grader, run in the sandbox, judge in the grader -------------------


#: Each check of one student function, by its name (exercise 2.3's cell calls the two halves
#: together, through L2.reshape_and_transpose: tested below).
CHECKS = {check.__name__: check for check in (L2.matmul, L2.sum, L2.reshape, L2.transpose,
                                             L2.unbroadcast, L2.cross_entropy)}
SEEDS = [0, 1, 7, 12345]


def graded(exercise: str, student_fn, seed: int) -> tuple[Split, object, object]:
    """``exercise``: the name of a check in CHECKS."""
    """What the grader does: probes from a secret seed, sent into the sandbox; run there on the
    student's function; what comes back crosses as JSON. (split, probes, outputs)."""
    split = CHECKS[exercise].split
    probes = split.probe(np.random.default_rng(seed))
    outputs = split.run(loads(dumps(probes)), student_fn)
    assert is_plain(outputs)
    return split, probes, loads(dumps(outputs))


def test_every_check_is_split():
    assert {c.exercise_id for c in CHECKS.values()} == set(L2.EXERCISES) == \
        {"2.1", "2.2", "2.3", "2.4", "2.5"}
    for check in [*CHECKS.values(), L2.reshape_and_transpose]:
        assert isinstance(check.split, Split) and check.exercise_id in L2.EXERCISES
        assert check.split.self_reported          # what the run checks on its own is named


@pytest.mark.parametrize("seed", SEEDS)
def test_exercise_2_3_judges_reshape_then_transpose(sol, seed):
    """The merged exercise 2.3: one split over both functions; a mistake in either fails it."""
    split = L2.reshape_and_transpose.split
    probes = split.probe(np.random.default_rng(seed))
    assert dumps(probes) != dumps(split.probe(None))
    outputs = loads(dumps(split.run(loads(dumps(probes)), sol["reshape"], sol["transpose"])))
    text = split.judge(probes, outputs)
    assert text.startswith("reshape:") and "\n\u2713 transpose:" in text
    wrong = student(MISTAKE_BY_ID["transpose_same_axes_backward"][1])
    outputs = loads(dumps(split.run(loads(dumps(probes)), sol["reshape"], wrong)))
    with pytest.raises(CheckFailed, match="^transpose, case"):
        split.judge(probes, outputs)
    for forged in (None, {}, {"reshape": outputs["reshape"]}, [1, 2]):
        with pytest.raises(CheckFailed, match="malformed"):
            split.judge(probes, forged)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("exercise", list(CHECKS))
def test_the_reference_passes_the_judge_on_fresh_probes(sol, exercise, seed):
    check = CHECKS[exercise]
    split, probes, outputs = graded(exercise, sol[check.__name__], seed)
    assert is_plain(probes)
    assert dumps(probes) != dumps(split.probe(None))             # not the notebook's cases
    assert dumps(probes) != dumps(split.probe(np.random.default_rng(seed + 1)))
    assert split.judge(probes, outputs).startswith(check.__name__)


@pytest.mark.parametrize("exercise", list(CHECKS))
def test_the_notebook_probes_are_the_lessons_own(exercise):
    split = CHECKS[exercise].split
    assert dumps(split.probe(None)) == dumps(split.probe(None))


def test_run_never_computes_an_expected_value(sol, monkeypatch):
    def forbidden(*args, **kwargs):
        raise AssertionError("an expected value was computed in the student's process")

    monkeypatch.setattr(L2, "_ce_expected", forbidden)
    monkeypatch.setattr(L2, "_ref_unbroadcast", forbidden)    # the judge's, not the scaffold's
    for exercise, check in CHECKS.items():
        graded(exercise, sol[check.__name__], seed=3)


MISTAKE_BY_ID = {p.id: p.values for p in MISTAKES}

#: Mistakes in values only: the run sees nothing wrong (it holds no expected value), the judge
#: catches them.
VALUE_MISTAKES = ["matmul_wrong_self_consistent", "sum_scales_the_gradient", "reshape_not_undone",
                  "transpose_same_axes_backward", "unbroadcast_with_a_mean",
                  "cross_entropy_sign_error", "cross_entropy_gradient_not_divided"]


@pytest.mark.parametrize("mistake", VALUE_MISTAKES)
def test_a_wrong_value_is_found_by_the_judge_not_the_run(mistake):
    check, source, _ = MISTAKE_BY_ID[mistake]
    exercise = check.__name__
    for seed in SEEDS:
        split, probes, outputs = graded(exercise, student(source), seed)
        assert not any("stopped" in case for case in outputs["cases"])
        with pytest.raises(CheckFailed, match="usual cause"):
            split.judge(probes, outputs)


def test_a_failure_in_the_run_reaches_the_judge_with_its_message():
    """In the grader the judge runs in another process: it gets the message alone."""
    source = MISTAKE_BY_ID["matmul_wrong_transposes"][1]
    split, probes, outputs = graded("matmul", student(source), seed=5)
    assert list(outputs["cases"][0]) == ["forward", "stopped"]    # stopped in case 1's VJP
    with pytest.raises(CheckFailed, match=r"(?s)matmul, case 1 of 4: A \(\d, \d\) @ B \(\d, \d\)"
                                          r".*raised ValueError.*usual cause: the shapes must fit"):
        split.judge(probes, outputs)


def test_the_first_mistake_is_reported_even_when_the_run_stops_later():
    """sum forgets keepdims: case 6's value is wrong, and case 7's VJP raises; case 6 is told."""
    source = MISTAKE_BY_ID["sum_drops_the_axes"][1]
    split = L2.sum.split
    probes = split.probe(None)
    outputs = split.run(probes, student(source))
    assert len(outputs["cases"]) == 7 and "stopped" in outputs["cases"][6]
    with pytest.raises(CheckFailed, match=r"case 6 of 8.*the result has shape \(\)"):
        split.judge(probes, outputs)


FORGED = {
    "nothing": lambda good: None,
    "empty": lambda good: {},
    "a string": lambda good: "all correct",
    "a list": lambda good: [1, 2, 3],
    "cases not a list": lambda good: {"cases": "x"},
    "a case not a dict": lambda good: {"cases": [1] * len(good["cases"])},
    "empty cases": lambda good: {"cases": [{}] * len(good["cases"])},
    "too few cases": lambda good: {"cases": good["cases"][:-1]},
    "too many cases": lambda good: {"cases": good["cases"] * 2},
    "zeros": zeros,
    "wrong shapes": reshaped,
    "strings for values": lambda good: {"cases": [{k: "1.0" for k in c} for c in good["cases"]]},
    "a stop that is not a message": lambda good: {"cases": [{"stopped": 3}]},
    "gradients missing": lambda good: {"cases": [{k: v for k, v in c.items() if k != "grads"}
                                                 for c in good["cases"]]},
}


@pytest.mark.parametrize("forge", list(FORGED))
@pytest.mark.parametrize("exercise", list(CHECKS))
def test_forged_outputs_are_refused_with_a_reason(sol, exercise, forge):
    split, probes, good = graded(exercise, sol[CHECKS[exercise].__name__], seed=11)
    forged = FORGED[forge](good)
    if dumps(forged) == dumps(good):  # unbroadcast's cases carry no "grads" to leave out
        pytest.skip("this forgery changes nothing in this check's outputs")
    with pytest.raises(CheckFailed) as info:
        split.judge(probes, forged)
    assert str(info.value).startswith(CHECKS[exercise].__name__)     # names what it judged


def test_cross_entropy_judge_agrees_with_the_numbers_derived_by_hand():
    """The lesson's three small cases, worked out on paper: the judge computes the same."""
    by_hand = [(np.log(4.0), [[0.25, 0.25, -0.75, 0.25]]),
               (-np.log(0.75), [[0.25, -0.25]]),
               ((np.log(1.5) + np.log(3.0)) / 2, [[-1 / 6, 1 / 6], [-1 / 3, 1 / 3]])]
    for (z, t), (loss, grad) in zip(L2._HAND, by_hand):
        want_loss, want_grad = L2._ce_expected(np.asarray(z), np.asarray(t))
        assert want_loss == pytest.approx(loss, rel=1e-12)
        np.testing.assert_allclose(want_grad, grad, rtol=1e-12, atol=1e-15)
    large = L2._ce_expected(np.array([[1e4, -1e4, 0.0], [-1e4, 1e4, 0.0], [1e4, 1e4, -1e4]]),
                            np.array([0, 0, 2]))
    assert large[0] == pytest.approx((0.0 + 2e4 + (2e4 + np.log(2.0))) / 3, rel=1e-12)
    np.testing.assert_allclose(large[1], np.array([[0, 0, 0], [-1, 1, 0], [0.5, 0.5, -1]]) / 3,
                               atol=1e-15)


@pytest.mark.parametrize("exercise", list(CHECKS))
def test_any_one_value_replaced_by_junk_is_refused(sol, exercise):
    """Each value the run sent back, replaced by junk in turn (the finite differences too):
    the judge refuses it with a CheckFailed, never another exception."""
    split, probes, real = graded(exercise, sol[CHECKS[exercise].__name__], seed=12)
    tried = 0
    for path, forged in junk_forgeries(real):
        tried += 1
        with pytest.raises(CheckFailed):
            split.judge(probes, forged)
    assert tried > 100
