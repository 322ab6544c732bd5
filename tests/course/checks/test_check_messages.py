"""The check messages issue 14 corrected, each fed the mistake it names.

Every case is a mistake a student makes; the check must fail with ``CheckFailed`` and its
message must name the actual cause (not a neighbouring one).
"""
from __future__ import annotations

import re

import numpy as np
import pytest
from tests.support.solutions_helper import solution_namespace, solution_with_mistake

from minigrad import Tensor, optim
from minigrad import functional as F
from minigrad.course.checks import CheckFailed, lesson1, lesson2, lesson3, lesson4

L1 = solution_namespace("01_from_scalars_to_tensors")
L3 = solution_namespace("03_parameters_modules_optimizer")


def message_of(check, *args) -> str:
    with pytest.raises(CheckFailed) as info:
        check(*args)
    return str(info.value)


def test_backward_without_the_seed_is_told_to_seed_the_output_with_ones():
    topological_order = L1["topological_order"]

    def backward(self):                     # forgets self.grad = np.ones_like(self.data)
        for node in reversed(topological_order(self)):
            if node.vjp is not None:
                for parent, pg in zip(node.parents, node.vjp(node.grad)):
                    parent.grad = pg if parent.grad is None else parent.grad + pg

    message = message_of(lesson1.backward, backward)
    assert "output" in message and "np.ones_like(self.data)" in message
    assert "seed" in message


def _cross_entropy(right: str, wrong: str):
    """The solution's cross_entropy (exercise 2.5) with ``right`` replaced by ``wrong``."""
    return solution_with_mistake("02_matmul_reductions_broadcasting", "2.5", right,
                                 wrong)["cross_entropy"]


def test_cross_entropy_gradient_without_the_onehot_is_told_so_not_to_divide_by_n():
    message = message_of(lesson2.cross_entropy,
                         _cross_entropy("g * (np.exp(log_p) - onehot) / n", "g * np.exp(log_p) / n"))
    assert "one-hot targets are not subtracted" in message
    assert "do not forget to divide" not in message


def test_cross_entropy_summed_instead_of_averaged_is_told_so():
    message = message_of(lesson2.cross_entropy,  # the loss summed, its gradient still / n
                         _cross_entropy("loss = -(log_p * onehot).sum() / n",
                                        "loss = -(log_p * onehot).sum()"))
    assert re.search(r"summed over the \d+ rows instead of averaged", message)


def test_parameters_with_value_in_list_is_told_to_compare_with_is():
    mistaken = solution_with_mistake("03_parameters_modules_optimizer", "3.2",
                                     "if not any(value is p for p in found):",
                                     "if value not in found:  # == on tensors: elementwise")
    message = message_of(lesson3.parameters, mistaken["Module"], mistaken["Parameter"])
    assert "`value in found`" in message and "any(value is p for p in found)" in message


@pytest.mark.parametrize("init", ["constant", "equal rows"])
def test_linear_with_constant_or_symmetric_weights_fails_check_3_3(init):
    Parameter, Linear = L3["Parameter"], L3["Linear"]

    class Symmetric(Linear):
        def __init__(self, in_features, out_features, rng=None):
            rng = np.random.default_rng(rng)
            k = 1.0 / np.sqrt(in_features)
            if init == "constant":
                w = np.full((out_features, in_features), k / 2)
            else:                                   # one random row, copied for every unit
                w = np.tile(rng.uniform(-k, k, size=in_features), (out_features, 1))
            self.weight = Parameter(w)
            self.bias = Parameter(rng.uniform(-k, k, size=out_features))

    message = message_of(lesson3.linear, Symmetric, Parameter)
    assert "the same thing" in message


def _train(mistake: str):
    def train(model, X, y, steps, lr):
        inputs, opt, losses = Tensor(X), optim.SGD(model.parameters(), lr=lr), []
        for _ in range(steps):
            opt.zero_grad()
            loss = F.cross_entropy(model(inputs), y)
            if mistake == "summed":
                loss = loss * len(y)
            (-loss if mistake == "ascent" else loss).backward()
            opt.step()
            losses.append(loss.item())
        return losses
    return train


def test_training_loop_whose_loss_rises_is_told_it_climbs_the_gradient():
    message = message_of(lesson4.train_loop, _train("ascent"))
    assert "gradient ascent" in message and "your loss rises" in message


def test_training_loop_with_a_summed_loss_is_told_so():
    message = message_of(lesson4.train_loop, _train("summed"))
    assert "summed over the 12 points instead of averaged" in message


def test_relu_check_probes_zero_where_the_gradient_is_zero():
    lesson1.relu(L1["relu"])                                   # the solution: 0 at x = 0

    def relu_ge(a):      # passes g at 0 as well (the check swaps in its reference Tensor)
        return Tensor(np.maximum(a.data, 0.0), (a,), lambda g: (np.where(a.data >= 0, g, 0.0),))

    message = message_of(lesson1.relu, relu_ge)
    assert "exactly at 0" in message and "a.data > 0 (not >= 0)" in message
