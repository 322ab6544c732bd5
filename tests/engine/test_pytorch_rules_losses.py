"""Issue 12, the last rules: clamp with tensor bounds, losses on one unbatched sample, the
target's gradient in binary cross-entropy, and the AvgPool2d layer.

PyTorch's answers (torch 2.13.0, CPU) are written beside each expected value: CI does not
install PyTorch. Gradients are also checked against finite differences.
"""
from __future__ import annotations

import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F
import minigrad.nn as nn

from tests.support.engine_helpers import NAMESPACES, host, make, namespace


# --- clamp with tensor bounds ----------------------------------------------------------------


def test_clamp_with_tensor_bounds_splits_the_gradient_as_pytorch():
    x = mg.tensor([-2.0, 0.0, 1.0, 3.0, 5.0], requires_grad=True)
    lo = mg.tensor([0.0, 0.0, 2.0, 2.0, 6.0], requires_grad=True)
    hi = mg.tensor([4.0, 4.0, 4.0, 3.0, 1.0], requires_grad=True)   # last: min > max
    y = mg.clamp(x, lo, hi)
    y.backward(np.arange(1.0, 6.0))
    # torch.clamp(x, lo, hi) and its backward with grad_output 1..5:
    np.testing.assert_array_equal(y.data, [0.0, 0.0, 2.0, 3.0, 1.0])
    np.testing.assert_array_equal(x.grad, [0.0, 2.0, 0.0, 4.0, 0.0])   # ties go to x
    np.testing.assert_array_equal(lo.grad, [1.0, 0.0, 3.0, 0.0, 0.0])  # min > max: none
    np.testing.assert_array_equal(hi.grad, [0.0, 0.0, 0.0, 0.0, 5.0])


@pytest.mark.parametrize("ns", NAMESPACES)
def test_clamp_with_tensor_bounds_agrees_with_finite_differences(ns):
    rng = np.random.default_rng(0)
    with namespace(ns) as xp:
        x = make(xp, rng.normal(size=(3, 4)))
        lo = make(xp, rng.normal(size=(1, 4)) - 0.5)   # broadcast along the rows
        hi = make(xp, rng.normal(size=(3, 1)) + 0.5)
        assert mg.gradcheck(lambda x, lo, hi: x.clamp(lo, hi), x, lo, hi)
        assert mg.gradcheck(lambda x, lo: x.clamp(min=lo), x, lo)
        assert mg.gradcheck(lambda x, hi: x.clip(max=hi), x, hi)


def test_clamp_refuses_a_bound_that_is_not_a_number_or_tensor():
    with pytest.raises(TypeError, match="clamp: min must be a number, a tensor or None; got str"):
        mg.tensor([1.0]).clamp(min="0")


# --- losses on one unbatched sample -----------------------------------------------------------


def test_cross_entropy_of_one_unbatched_sample():
    z = mg.tensor([1.0, 2.0, 0.5], requires_grad=True)
    loss = F.cross_entropy(z, 1)
    loss.backward()
    assert loss.shape == ()
    # torch: F.cross_entropy(tensor([1., 2., .5]), tensor(1)) = 0.4644, grad below
    np.testing.assert_allclose(loss.item(), 0.46436878, rtol=1e-7)
    np.testing.assert_allclose(z.grad, [0.2312239, -0.37146828, 0.14024438], rtol=1e-6)
    assert F.cross_entropy(z, np.array(1), reduction="none").shape == ()   # torch: Size([])
    # class probabilities of shape (C,): torch gives 1.4144
    np.testing.assert_allclose(F.cross_entropy(z, mg.tensor([0.2, 0.3, 0.5])).item(),
                               1.41436878, rtol=1e-7)
    # nll_loss reads the entry: torch gives -2.
    assert F.nll_loss(z, 1, reduction="none").item() == -2.0


def test_unbatched_sample_agrees_with_a_batch_of_one():
    rng = np.random.default_rng(1)
    z = rng.normal(size=5)
    for target in (3, np.int64(0)):
        one = F.cross_entropy(mg.tensor(z), target, label_smoothing=0.1)
        batch = F.cross_entropy(mg.tensor(z[None]), np.array([target]), label_smoothing=0.1)
        assert one.item() == batch.item()


@pytest.mark.parametrize("target, message", [
    ([1, 2], r"one class index \(a 0-d integer\) or 3 class probabilities; got shape \(2,\)"),
    ("a", "must be an integer class index or an array or tensor of class probabilities; "
          "got str"),
])
def test_an_unbatched_sample_with_a_wrong_target_is_refused(target, message):
    with pytest.raises((ValueError, TypeError), match=message):
        F.cross_entropy(mg.tensor([1.0, 2.0, 0.5]), target)


# --- binary cross-entropy: the target's gradient ---------------------------------------------


def test_binary_cross_entropy_gives_the_target_pytorchs_gradient():
    p = mg.tensor([0.2, 0.9, 0.0], requires_grad=True)
    t = mg.tensor([1.0, 0.3, 0.5], requires_grad=True)
    with np.errstate(divide="ignore"):
        loss = F.binary_cross_entropy(p, t)
        loss.backward()
    # torch: loss 17.7510, p.grad [-1.6667, 2.2222, -1.6667e11], t.grad [0.4621, -0.7324, inf]
    np.testing.assert_allclose(loss.item(), 17.75095188, rtol=1e-7)
    np.testing.assert_allclose(p.grad, [-1.66666667, 2.22222222, -1.66666667e11], rtol=1e-7)
    np.testing.assert_allclose(t.grad[:2], [0.46209812, -0.73240819], rtol=1e-7)
    assert t.grad[2] == np.inf


def test_binary_cross_entropy_with_logits_gives_the_target_pytorchs_gradient():
    z = mg.tensor([0.5, -1.0, 2.0], requires_grad=True)
    t = mg.tensor([1.0, 0.3, 0.5], requires_grad=True)
    loss = F.binary_cross_entropy_with_logits(z, t, pos_weight=mg.tensor([2.0, 1.0, 1.0]))
    loss.backward()
    # torch: loss 0.8961, z.grad [-0.2517, -0.0104, 0.1269], t.grad [-0.0086, 0.3333, -0.6667]
    np.testing.assert_allclose(loss.item(), 0.89611456, rtol=1e-7)
    np.testing.assert_allclose(z.grad, [-0.25169378, -0.01035286, 0.12693236], rtol=1e-6)
    np.testing.assert_allclose(t.grad, [-0.00864101, 0.33333333, -0.66666667], rtol=1e-6)


def test_a_pos_weight_that_requires_grad_is_refused_as_in_pytorch():
    # torch 2.13: RuntimeError "not differentiable with respect to argument 'pos_weight'"
    z = mg.tensor([[0.5, -1.0, 2.0]], requires_grad=True)
    w = mg.tensor([2.0, 1.0, 0.5], requires_grad=True)
    with pytest.raises(ValueError, match="pos_weight must not require grad.*detach"):
        F.binary_cross_entropy_with_logits(z, [[1.0, 0.3, 0.5]], pos_weight=w)
    loss = F.binary_cross_entropy_with_logits(z, [[1.0, 0.3, 0.5]], pos_weight=w.detach())
    np.testing.assert_allclose(loss.item(), 0.88553722, rtol=1e-7)  # torch: the same


@pytest.mark.parametrize("ns", NAMESPACES)
def test_binary_cross_entropy_target_gradient_agrees_with_finite_differences(ns):
    rng = np.random.default_rng(2)
    with namespace(ns) as xp:
        p = make(xp, rng.uniform(0.1, 0.9, size=(2, 3)))
        t = make(xp, rng.uniform(0.0, 1.0, size=(2, 3)))
        z = make(xp, rng.normal(size=(2, 3)))
        assert mg.gradcheck(F.binary_cross_entropy, p, t)
        assert mg.gradcheck(lambda z, t: F.binary_cross_entropy_with_logits(
            z, t, pos_weight=3.0), z, t)



def test_a_plain_target_still_gets_no_gradient_and_costs_nothing():
    p = mg.tensor([0.2, 0.7], requires_grad=True)
    F.binary_cross_entropy(p, [1.0, 0.0]).backward()
    np.testing.assert_allclose(p.grad, [-2.5, 1.66666667], rtol=1e-7)   # torch: same


# --- nn.AvgPool2d ----------------------------------------------------------------------------


@pytest.mark.parametrize("ns", NAMESPACES)
def test_avg_pool_layer_is_the_function(ns):
    with namespace(ns) as xp:
        x = make(xp, np.random.default_rng(3).normal(size=(2, 3, 7, 6)))
        layer = nn.AvgPool2d((3, 2), stride=(2, 1), padding=(1, 0))
        np.testing.assert_array_equal(host(xp, layer(x).data),
                                      host(xp, F.avg_pool2d(x, (3, 2), (2, 1), (1, 0)).data))
        assert layer(x).shape == (2, 3, 4, 5)   # torch: Size([2, 3, 4, 5])
    assert list(layer.parameters()) == []


def test_avg_pool_layer_repr_and_errors():
    assert repr(nn.AvgPool2d(2)) == "AvgPool2d(kernel_size=2, stride=2)"
    assert repr(nn.AvgPool2d(3, 1, 1)) == "AvgPool2d(kernel_size=3, stride=1, padding=1)"
    with pytest.raises(ValueError, match="AvgPool2d: kernel_size must be >= 1; got 0"):
        nn.AvgPool2d(0)
    with pytest.raises(ValueError, match="AvgPool2d: padding must be >= 0; got -1"):
        nn.AvgPool2d(2, padding=-1)
