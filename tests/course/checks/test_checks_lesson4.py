"""The lesson 4 checks pass the reference solutions and catch broken ones with a useful message.

The reference functions are the notebook's own solutions, loaded from it; each broken variant is a mistake a
student makes. A check must fail with ``CheckFailed`` and name the cause.
"""
from __future__ import annotations

import numpy as np
import pytest
from tests.support.checking import fails
from tests.support.solutions_helper import solution_namespace
from tests.support.split_helpers import JUNK, is_plain, places, replaced, reshaped, zeros

from minigrad import Tensor, nn, optim
from minigrad import functional as F
from minigrad.course import byhand
from minigrad.course.checks import CheckFailed, Split, lesson4
from minigrad.course.grading.protocol import dumps, loads

# --- the reference solutions: the notebook's own exercise cells -------------------------------

_SOLUTION = solution_namespace("04_train_and_check")
network, hand_gradients, train = (_SOLUTION[name] for name in ["network", "hand_gradients", "train"])


def _forward(x, t, W1, b1, W2, b2):
    """The 2-2-2 forward pass in NumPy, shared by the broken hand_gradients variants below."""
    z1 = W1 @ x + b1
    h = 1 / (1 + np.exp(-z1))
    z2 = W2 @ h + b2
    p = np.exp(z2 - z2.max())
    p = p / p.sum()
    onehot = np.eye(len(z2))[t]
    return z1, h, z2, p, onehot


def test_reference_solutions_pass_every_check(capsys):
    lesson4.network(network)
    lesson4.hand_gradients(hand_gradients)
    lesson4.train_loop(train)
    out = capsys.readouterr().out
    assert out.count("\u2713") == 3
    assert "check 4.1" in out and "check 4.2" in out and "check 4.3" in out


def test_exercises_have_points_for_every_check():
    assert set(lesson4.EXERCISES) == {"4.1", "4.2", "4.3"}
    assert all(e["points"] > 0 and e["title"] for e in lesson4.EXERCISES.values())


def test_the_lessons_table_numbers_are_the_engines():
    """The 6-decimal numbers printed in the lesson's tables (checked here, not only there)."""
    net = lesson4.NETWORK
    grads = hand_gradients(*(net[k] for k in ("x", "t", "W1", "b1", "W2", "b2")))
    np.testing.assert_allclose(grads["W1"], [[0.184296, -0.092148], [-0.140686, 0.070343]],
                               atol=5.1e-7)
    np.testing.assert_allclose(grads["W2"], [[0.441885, 0.261101], [-0.441885, -0.261101]],
                               atol=5.1e-7)
    model = network(net["W1"], net["b1"], net["W2"], net["b2"])
    loss = F.cross_entropy(model(Tensor(net["x"][None, :])), np.array([net["t"]]))
    assert abs(loss.item() - 1.051586) < 5e-7


# --- minigrad's own functions are refused ----------------------------------------------------


def test_minigrad_functions_are_refused():
    fails(lesson4.train_loop, byhand.train, match=r"minigrad\.course\.byhand.*your own")
    fails(lesson4.network, nn.Sequential, match=r"minigrad.*your own")
    fails(lesson4.hand_gradients, None, match=r"None")


# --- 4.1 network ---------------------------------------------------------------------------


def relu_network(W1, b1, W2, b2):
    model = nn.Sequential(nn.Linear(W1.shape[1], W1.shape[0]), nn.ReLU(),
                          nn.Linear(W2.shape[1], W2.shape[0]))
    model.load_state_dict({"0.weight": W1, "0.bias": b1, "2.weight": W2, "2.bias": b2})
    return model


def no_activation(W1, b1, W2, b2):
    model = nn.Sequential(nn.Linear(W1.shape[1], W1.shape[0]), nn.Linear(W2.shape[1], W2.shape[0]))
    model.load_state_dict({"0.weight": W1, "0.bias": b1, "1.weight": W2, "1.bias": b2})
    return model


class _Softmax(nn.Module):
    def forward(self, x):
        return F.softmax(x)


def softmax_at_the_end(W1, b1, W2, b2):
    model = network(W1, b1, W2, b2)
    model.append(_Softmax())
    return model


def transposed_weights(W1, b1, W2, b2):
    return network(W1.T.copy(), b1, W2.T.copy(), b2)


def fixed_sizes(W1, b1, W2, b2):
    model = nn.Sequential(nn.Linear(2, 2), nn.Sigmoid(), nn.Linear(2, 2))
    model.load_state_dict({"0.weight": W1, "0.bias": b1, "2.weight": W2, "2.bias": b2})
    return model


def aliased(W1, b1, W2, b2):
    model = network(W1, b1, W2, b2)
    model[0].weight.data, model[0].bias.data = W1, b1
    model[2].weight.data, model[2].bias.data = W2, b2
    return model


def not_loaded(W1, b1, W2, b2):
    return nn.Sequential(nn.Linear(W1.shape[1], W1.shape[0], seed=0), nn.Sigmoid(),
                         nn.Linear(W2.shape[1], W2.shape[0], seed=1))


def returns_a_function(W1, b1, W2, b2):
    return lambda x: x @ W1.T


# --- 4.2 hand_gradients --------------------------------------------------------------------


def _with(delta2_fn=None, delta1_fn=None, outer=np.outer, flip=False):
    """A hand_gradients with one step of the chain rule replaced."""
    def broken(x, t, W1, b1, W2, b2):
        z1, h, z2, p, onehot = _forward(x, t, W1, b1, W2, b2)
        delta2 = delta2_fn(p, onehot, z2) if delta2_fn else p - onehot
        delta1 = delta1_fn(W2, delta2, h, z1) if delta1_fn else (W2.T @ delta2) * h * (1 - h)
        if flip:
            return {"W1": outer(x, delta1), "b1": delta1, "W2": outer(h, delta2), "b2": delta2}
        return {"W1": outer(delta1, x), "b1": delta1, "W2": outer(delta2, h), "b2": delta2}
    return broken


def test_hand_gradients_with_the_wrong_sign_is_caught():
    broken = _with(delta2_fn=lambda p, onehot, z2: onehot - p)
    fails(lesson4.hand_gradients, broken, match=r"dL/db2.*sign is flipped.*p - onehot")


def test_hand_gradients_with_transposed_outer_products_is_caught():
    broken = _with(flip=True)
    fails(lesson4.hand_gradients, broken, match=r"dL/dW2.*outer\(delta2, h\)")


def test_hand_gradients_without_sigmoid_derivative_is_caught():
    broken = _with(delta1_fn=lambda W2, d2, h, z1: W2.T @ d2)
    fails(lesson4.hand_gradients, broken, match=r"dL/db1.*sigmoid's derivative is missing")


def test_hand_gradients_with_derivative_at_z1_is_caught():
    broken = _with(delta1_fn=lambda W2, d2, h, z1: (W2.T @ d2) * z1 * (1 - z1))
    fails(lesson4.hand_gradients, broken, match=r"dL/db1.*not z1 \* \(1 - z1\)")


def test_hand_gradients_without_transposing_W2_is_caught():
    broken = _with(delta1_fn=lambda W2, d2, h, z1: (W2 @ d2) * h * (1 - h))
    fails(lesson4.hand_gradients, broken, match=r"dL/db1.*W2\.T @ delta2")


def test_hand_gradients_with_logits_instead_of_probabilities_is_caught():
    broken = _with(delta2_fn=lambda p, onehot, z2: z2 - onehot)
    fails(lesson4.hand_gradients, broken, match=r"dL/db2.*use the probabilities p")


def test_hand_gradients_copied_from_the_table_is_caught():
    def copied(x, t, W1, b1, W2, b2):
        return {"W1": np.array([[0.184296, -0.092148], [-0.140686, 0.070343]]),
                "b1": np.array([0.184296, -0.140686]),
                "W2": np.array([[0.441885, 0.261101], [-0.441885, -0.261101]]),
                "b2": np.array([0.650617, -0.650617])}
    fails(lesson4.hand_gradients, copied, match=r"lesson's 2-2-2 network, dL/db2")


def test_hand_gradients_returning_a_list_is_caught():
    def as_list(*args):
        g = hand_gradients(*args)
        return [g["W1"], g["b1"], g["W2"], g["b2"]]
    fails(lesson4.hand_gradients, as_list, match=r"a dict with keys")


def test_hand_gradients_not_done_says_so():
    def todo(*args):
        raise NotImplementedError
    fails(lesson4.hand_gradients, todo, match=r"not done yet")


# --- 4.3 train -----------------------------------------------------------------------------


def _loop(*, zero_grad=True, step_before_backward=False, step=True, keep_tensors=False):
    """The lesson's training loop with one line changed (the keyword says which)."""
    def train(model, X, y, steps, lr):
        inputs, opt, losses = Tensor(X), optim.SGD(model.parameters(), lr=lr), []
        for _ in range(steps):
            if zero_grad:
                opt.zero_grad()
            loss = F.cross_entropy(model(inputs), y)
            if step and step_before_backward:
                opt.step()
            loss.backward()
            if step and not step_before_backward:
                opt.step()
            losses.append(loss if keep_tensors else loss.item())
        return losses
    return train


def test_the_loop_template_unchanged_passes(capsys):
    lesson4.train_loop(_loop())
    assert "\u2713 check 4.3" in capsys.readouterr().out


train_without_zero_grad = _loop(zero_grad=False)
train_step_before_backward = _loop(step_before_backward=True)
train_keeping_tensors = _loop(keep_tensors=True)
train_never_steps = _loop(zero_grad=False, step=False)


def train_fixed_lr(model, X, y, steps, lr):
    return train(model, X, y, steps, 0.1)


def train_one_step_too_many(model, X, y, steps, lr):
    return train(model, X, y, steps + 1, lr)


def train_without_lr(model, X, y, steps, lr):
    return train(model, X, y, steps, 1.0)


# --- each mistake and what its message must say --------------------------------------------

MISTAKES = [
    pytest.param(lesson4.network, (relu_network,),
                 r"logits.*nn\.Sigmoid\(\), not ReLU",
                 id='network_with_relu'),
    pytest.param(lesson4.network, (no_activation,),
                 r"nn\.Sigmoid\(\) is missing",
                 id='network_without_activation'),
    pytest.param(lesson4.network, (softmax_at_the_end,),
                 r"return the logits",
                 id='network_returning_probabilities'),
    pytest.param(lesson4.network, (transposed_weights,),
                 r"lesson's 2-2-2 network: logits.*\(out, in\)",
                 id='network_with_transposed_weights'),
    pytest.param(lesson4.network, (fixed_sizes,),
                 r"3-4-3 network.*size mismatch",
                 id='network_with_hardcoded_sizes'),
    pytest.param(lesson4.network, (aliased,),
                 r"shares memory with W1.*load_state_dict",
                 id='network_sharing_memory_with_the_given_weights'),
    pytest.param(lesson4.network, (not_loaded,),
                 r"expected:.*got:.*load W1, b1, W2, b2",
                 id='network_keeping_its_random_weights'),
    pytest.param(lesson4.network, (returns_a_function,),
                 r"minigrad\.nn\.Module",
                 id='network_that_is_not_a_module'),
    pytest.param(lesson4.train_loop, (train_without_zero_grad,),
                 r"step 3 of 6.*gradients accumulate.*zero_grad",
                 id='train_without_zero_grad'),
    pytest.param(lesson4.train_loop, (train_step_before_backward,),
                 r"did not change|before",
                 id='train_stepping_before_backward'),
    pytest.param(lesson4.train_loop, (train_keeping_tensors,),
                 r"loss\.item\(\).*graph",
                 id='train_keeping_loss_tensors'),
    pytest.param(lesson4.train_loop, (train_fixed_lr,),
                 r"step 2 of 6.*expected: loss",
                 id='train_ignoring_lr'),
    pytest.param(lesson4.train_loop, (train_without_lr,),
                 r"learning rate is not used",
                 id='train_without_lr'),
    pytest.param(lesson4.train_loop, (train_one_step_too_many,),
                 r"6 losses.*got:\s+7",
                 id='train_with_the_wrong_number_of_steps'),
    pytest.param(lesson4.train_loop, (train_never_steps,),
                 r"parameters did not change",
                 id='train_that_never_updates'),
]


@pytest.mark.parametrize("check, args, match", MISTAKES)
def test_the_mistake_is_caught_with_its_message(check, args, match):
    fails(check, *args, match=match)


# --- the split: probes drawn in the grader, run in the sandbox, judged in the grader ---------
#
# What crosses the sandbox's edge goes through the grader's protocol (JSON, arrays as .npy):
# each test below sends the probes and the outputs through dumps/loads, as the grader does.

#: exercise -> (its check, the reference solution it takes)
SPLIT = {"4.1": (lesson4.network, network), "4.2": (lesson4.hand_gradients, hand_gradients),
         "4.3": (lesson4.train_loop, train)}
SEEDS = [0, 1, 2, 3]


def _graded(exercise, student, seed):
    """(probes, outputs) as the grader has them: drawn from ``seed``, run on ``student`` after
    the trip into the sandbox, outputs back through the protocol."""
    split = SPLIT[exercise][0].split
    probes = split.probe(np.random.default_rng(seed))
    outputs = split.run(loads(dumps(probes)), student)
    assert is_plain(outputs), f"run of {exercise} sent back something that is not plain data"
    return probes, loads(dumps(outputs))


def test_every_check_is_split_and_only_4_1_reports_on_itself():
    assert all(isinstance(check.split, Split) for check, _ in SPLIT.values())
    assert {e for e, (check, _) in SPLIT.items() if check.split.self_reported} == {"4.1"}
    assert [check.exercise_id for check, _ in SPLIT.values()] == list(lesson4.EXERCISES)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("exercise", list(SPLIT))
def test_the_solution_passes_the_judge_on_grader_probes(exercise, seed):
    check, student = SPLIT[exercise]
    probes, outputs = _graded(exercise, student, seed)
    assert dumps(probes) != dumps(check.split.probe(None))         # not the lesson's cases
    assert check.split.judge(probes, outputs).startswith(f"check {exercise}")


@pytest.mark.parametrize("exercise", list(SPLIT))
def test_grader_probes_are_fresh_cases_of_the_same_kind(exercise):
    split = SPLIT[exercise][0].split
    drawn = [split.probe(np.random.default_rng(seed)) for seed in range(6)]
    assert len({dumps(p) for p in drawn}) == 6
    assert dumps(split.probe(None)) == dumps(split.probe(None))    # the lesson's: fixed
    if exercise == "4.3":
        shapes = {p["X"].shape + (p["steps"],) for p in drawn}
        assert all(p["y"].max() < p["start"]["2.bias"].shape[0] for p in drawn)
    else:
        shapes = {tuple(case["W1"].shape + case["W2"].shape) for p in drawn
                  for case in p["cases"]}
    assert len(shapes) > 3                                         # sizes vary too


@pytest.mark.parametrize("exercise", list(SPLIT))
def test_run_never_computes_an_expected_value(exercise, monkeypatch):
    def forbidden(*args, **kwargs):
        raise AssertionError("an expected value was computed in the student's process")

    for name in ("_logits", "_engine_gradients", "_hand_variants", "_byhand_run"):
        monkeypatch.setattr(lesson4, name, forbidden)
    monkeypatch.setattr(lesson4, "byhand", None)
    check, student = SPLIT[exercise]
    probes = check.split.probe(np.random.default_rng(5))
    assert is_plain(check.split.run(probes, student))


@pytest.mark.parametrize("exercise", list(SPLIT))
def test_forged_outputs_are_refused_by_the_judge(exercise):
    check, student = SPLIT[exercise]
    probes, real = _graded(exercise, student, 11)
    forgeries = [None, {}, [], "passed", 1.0, {"cases": "x"}, {"cases": []},
                 {"losses": [0.0] * 8}, zeros(real), reshaped(real),
                 *([{"cases": real["cases"][:2]}, {"cases": [*real["cases"][:2], {"stopped": 3}]}]
                   if "cases" in real
                   else [{**real, "X": None}, {**real, "losses": real["losses"][:-1]}])]
    # the judge of another exercise's outputs: right data for the wrong check
    forgeries += [_graded(other, SPLIT[other][1], 11)[1] for other in SPLIT if other != exercise]
    for forged in forgeries:
        with pytest.raises(CheckFailed):
            check.split.judge(probes, loads(dumps(forged)))


@pytest.mark.parametrize("exercise", list(SPLIT))
def test_any_one_corrupted_value_is_a_check_failure_never_a_crash(exercise):
    """Each value the run sent back, replaced by junk in turn: the judge refuses it with a
    CheckFailed (a zero with a reason), never another exception."""
    check, student = SPLIT[exercise]
    probes, real = _graded(exercise, student, 12)
    tried = 0
    for path, value in list(places(real)):
        for bad in JUNK:
            if type(bad) is type(value) and dumps(bad) == dumps(value):
                continue
            tried += 1
            with pytest.raises(CheckFailed):
                check.split.judge(probes, replaced(real, path, bad))
    assert tried > 50


# wrong work is caught in the grader too, on probes it has never seen, with the same causes

GRADED_MISTAKES = [
    ("4.1", relu_network, r"not ReLU"),
    ("4.1", aliased, r"shares memory"),
    ("4.1", fixed_sizes, r"size mismatch"),
    ("4.2", _with(delta2_fn=lambda p, onehot, z2: onehot - p), r"dL/db2.*sign is flipped"),
    ("4.2", _with(flip=True), r"dL/dW2.*outer\(delta2, h\)"),
    ("4.3", train_without_zero_grad, r"gradients accumulate"),
    ("4.3", train_keeping_tensors, r"loss\.item\(\)"),
    ("4.3", train_never_steps, r"parameters did not change"),
]


@pytest.mark.parametrize("exercise, student, match", GRADED_MISTAKES)
def test_a_mistake_is_caught_on_grader_probes_with_its_cause(exercise, student, match):
    split = SPLIT[exercise][0].split
    with pytest.raises(CheckFailed, match=f"(?s){match}"):
        probes, outputs = _graded(exercise, student, 21)   # run's own findings raise here
        split.judge(probes, outputs)


def test_a_run_stopped_by_the_students_error_is_judged_after_the_cases_before_it():
    """A hand_gradients that raises on a 3-4-3 network but is wrong on the lesson's network
    is told about the lesson's network first; in the grader, the error's message still comes
    back (as data) when the cases before it are right."""
    def square_only(x, t, W1, b1, W2, b2):
        if W2.shape[0] != W2.shape[1]:
            raise ValueError("only square W2, sorry")
        return hand_gradients(x, t, W1, b1, W2, b2)

    split = lesson4.hand_gradients.split
    notebook = split.probe(None)
    outputs = split.run(notebook, square_only)
    assert len(outputs["cases"]) == 3 and "only square W2" in outputs["cases"][2]["stopped"]
    with pytest.raises(CheckFailed, match="3-4-3 network.*only square W2") as info:
        split.judge(notebook, outputs)
    assert isinstance(info.value.__cause__, ValueError)    # the notebook shows where it raised
    wrong_first = _with(delta2_fn=lambda p, onehot, z2: onehot - p)
    fails(lambda: split.judge(notebook, split.run(notebook, lambda *a: (
        square_only(*a), wrong_first(*a))[1])), match=r"lesson's 2-2-2 network, dL/db2.*sign")
    grader = {"cases": [dict(case, W2=case["W2"][:, :1]) if i == 3 else case
                        for i, case in enumerate(split.probe(np.random.default_rng(3))["cases"])]}
    back = loads(dumps(split.run(grader, square_only)))
    assert type(back) is dict                                  # the error object stayed behind
    with pytest.raises(CheckFailed, match="only square W2"):
        split.judge(grader, back)


def test_the_split_helpers_do_what_they_say():
    assert is_plain({"a": [1, 2.5, "x", None, (np.zeros((2, 3)),)]})
    for value in (object(), {1: 2}, [Tensor([1.0])], np.array(["a"]), {"a": {"b": lambda: 1}}):
        assert not is_plain(value)
    x = {"a": [np.ones(2), 3], "b": np.ones((2, 2))}
    assert np.array_equal(zeros(x)["a"][0], [0, 0]) and reshaped(x)["b"].shape == (1, 2, 2)
    assert [p for p, _ in places(x)] == [("a", 0), ("a", 1), ("a",), ("b",), ()]
    assert replaced(x, ("a", 1), "y")["a"] == [x["a"][0], "y"] and x["a"][1] == 3


@pytest.mark.parametrize("exercise", list(SPLIT))
def test_the_graders_tick_line_is_the_same_whatever_the_seed(exercise):
    """The report of a passed exercise does not depend on the run's secret seed (two gradings
    of the same work read the same); the notebook's line names the lesson's cases."""
    check, student = SPLIT[exercise]
    lines = {check.split.judge(*_graded(exercise, student, seed)) for seed in SEEDS}
    assert len(lines) == 1
    notebook = check.split.probe(None)
    assert check.split.judge(notebook, check.split.run(notebook, student)) not in lines
