"""The check messages issue 14 corrected, each fed the mistake it names.

Every case is a mistake a student makes; the check must fail with ``CheckFailed`` and its
message must name the actual cause (not a neighbouring one).
"""
from __future__ import annotations

import re

import numpy as np
import pytest
from solutions_helper import solution_namespace

from minigrad import Tensor, op, optim
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


def _cross_entropy(mistake: str):
    def cross_entropy(logits, targets):
        z = logits.data
        n = z.shape[0]
        shifted = z - z.max(axis=1, keepdims=True)
        log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        onehot = np.zeros_like(z)
        onehot[np.arange(n), targets] = 1.0
        loss = -(log_p * onehot).sum() / (1 if mistake == "summed" else n)
        if mistake == "no onehot":
            return op(loss, (logits,), lambda g, lp, oh: g * np.exp(lp) / n,
                      saved=(log_p, onehot), name="cross_entropy")
        return op(loss, (logits,), lambda g, lp, oh: g * (np.exp(lp) - oh) / n,
                  saved=(log_p, onehot), name="cross_entropy")
    return cross_entropy


def test_cross_entropy_gradient_without_the_onehot_is_told_so_not_to_divide_by_n():
    message = message_of(lesson2.cross_entropy, _cross_entropy("no onehot"))
    assert "one-hot targets are not subtracted" in message
    assert "do not forget to divide" not in message


def test_cross_entropy_summed_instead_of_averaged_is_told_so():
    message = message_of(lesson2.cross_entropy, _cross_entropy("summed"))
    assert re.search(r"summed over the \d+ rows instead of averaged", message)


def test_parameters_with_value_in_list_is_told_to_compare_with_is():
    Parameter, Module = L3["Parameter"], L3["Module"]

    class InModule(Module):
        def parameters(self):
            found = []

            def collect(value):
                if isinstance(value, Parameter):
                    if value not in found:          # == on tensors: elementwise
                        found.append(value)
                elif isinstance(value, Module):
                    for p in value.parameters():
                        collect(p)
                elif isinstance(value, (list, tuple)):
                    for item in value:
                        collect(item)
                elif isinstance(value, dict):
                    for item in value.values():
                        collect(item)

            for value in vars(self).values():
                collect(value)
            return found

    message = message_of(lesson3.parameters, InModule, Parameter)
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
