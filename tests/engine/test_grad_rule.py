"""The rule for a leaf's ``.grad`` (documented in ``Tensor.backward``), PyTorch's rule.

* A leaf without a ``.grad`` gets an array of its own, never one that another tensor's
  ``.grad`` shares. (PyTorch: ``a + b`` then ``a.grad.add_(1)`` leaves ``b.grad`` at ones.)
* A leaf with a ``.grad`` gets the new gradient added in place: the same array object.
  (PyTorch: ``g = x.grad; y.backward(); g is x.grad`` and ``g`` holds the sum.)
* A parameter of a fused optimizer gets its ``.grad`` written into the optimizer's buffer,
  the same array at every step, also after ``zero_grad()``.
"""
import numpy as np
import pytest

import minigrad as mg
from minigrad import nn, optim
from minigrad.tensor import gradient_product


def leaves(*values, dtype="float64"):
    return [mg.tensor(v, requires_grad=True, dtype=dtype) for v in values]


def test_two_leaves_added_do_not_share_a_grad_array():
    a, b = leaves([1.0, 2.0], [3.0, 4.0])
    (a + b).sum().backward()
    assert a.grad is not b.grad and not np.shares_memory(a.grad, b.grad)
    a.grad += 1  # an in-place change to one ...
    assert b.grad.tolist() == [1.0, 1.0]  # ... never changes the other (PyTorch: ones)
    assert a.grad.tolist() == [2.0, 2.0]


def test_a_view_of_the_output_gradient_is_not_shared_either():
    # reshape's VJP returns a view of the gradient that add handed to b as well
    a, b = leaves([[1.0, 2.0]], [3.0, 4.0])
    (a.reshape(2) + b).sum().backward()
    assert not np.shares_memory(a.grad, b.grad)
    b.grad *= 5
    assert a.grad.tolist() == [[1.0, 1.0]]


def test_gradient_given_to_backward_is_copied():
    x, = leaves([1.0, 2.0])
    g = np.array([0.5, 0.25])
    x.backward(g)  # a leaf's own backward: its .grad is the given gradient, but a copy
    assert x.grad.tolist() == [0.5, 0.25] and x.grad is not g
    y, = leaves([1.0, 2.0])
    z = y * 1.0
    z.backward(g)
    g[0] = 100.0
    assert y.grad.tolist() == [0.5, 0.25]


def test_an_existing_grad_is_added_to_in_place():
    x, = leaves([1.0, 2.0])
    (x * 3).sum().backward()
    first = x.grad
    (x * x).sum().backward()
    assert x.grad is first  # the same array: PyTorch accumulates into .grad in place
    assert first.tolist() == [3.0 + 2.0, 3.0 + 4.0]


def test_a_grad_set_by_hand_is_added_to_in_place():
    x, = leaves([1.0, 2.0])
    mine = np.array([10.0, 20.0])
    x.grad = mine
    (x * 2).sum().backward()
    assert x.grad is mine and mine.tolist() == [12.0, 22.0]


def test_a_leaf_used_twice_sums_its_gradients():
    x, = leaves([3.0])
    (x * x + x).sum().backward()  # d/dx (x^2 + x) = 2x + 1
    assert x.grad.tolist() == [7.0]


def test_after_grad_is_set_to_none_a_new_array_is_made():
    x, = leaves([1.0, 2.0])
    (x * 2).sum().backward()
    kept = x.grad
    x.grad = None
    (x * 3).sum().backward()
    assert x.grad is not kept
    assert kept.tolist() == [2.0, 2.0] and x.grad.tolist() == [3.0, 3.0]


def test_float32_leaf_keeps_a_float32_grad():
    x, = leaves([1.0, 2.0], dtype="float32")
    (x * 2).sum().backward()
    assert x.grad.dtype == np.float32
    (x * 2).sum().backward()
    assert x.grad.dtype == np.float32 and x.grad.tolist() == [4.0, 4.0]


def test_fused_optimizer_reuses_one_gradient_buffer_across_steps():
    model = nn.Linear(3, 2, seed=0)
    opt = optim.SGD(model.parameters(), lr=0.1)
    x = mg.tensor(np.ones((4, 3)))
    grads = []
    for _ in range(3):
        opt.zero_grad()
        assert model.weight.grad is None  # zero_grad() still sets .grad to None
        model(x).sum().backward()
        grads.append(model.weight.grad)
        opt.step()
    # the same array at every step (written in place, no new memory), as documented
    assert grads[0] is grads[1] is grads[2]
    assert model.weight.grad.base is model.bias.grad.base  # views of one flat buffer
    # zero_grad(set_to_none=False) zeroes that same array in place, as PyTorch's zero_()
    opt.zero_grad(set_to_none=False)
    assert model.weight.grad is grads[0] and not model.weight.grad.any()


def test_fused_optimizer_gradients_of_two_parameters_do_not_alias():
    a = nn.Parameter(np.array([1.0, 2.0]))
    b = nn.Parameter(np.array([3.0, 4.0]))
    optim.SGD([a, b], lr=0.1)
    (a + b).sum().backward()
    assert not np.shares_memory(a.grad, b.grad)
    a.grad[0] = 9.0
    assert b.grad.tolist() == [1.0, 1.0]


def test_rule_holds_on_array_api_strict():
    xp = pytest.importorskip("array_api_strict")
    a = mg.Tensor(xp.asarray([1.0, 2.0], dtype=xp.float64), requires_grad=True)
    b = mg.Tensor(xp.asarray([3.0, 4.0], dtype=xp.float64), requires_grad=True)
    (a + b).sum().backward()
    first_a = a.grad
    a.grad += 1
    assert np.asarray(b.grad).tolist() == [1.0, 1.0]
    (a * 2).sum().backward()
    assert a.grad is first_a and np.asarray(a.grad).tolist() == [4.0, 4.0]


def _linear_grads(fused, uses=1, backwards=1, freeze_bias=False):
    """The weight and bias gradients of one nn.Linear applied ``uses`` times in a chain,
    after ``backwards`` backward passes without zero_grad, with a fused optimizer or not."""
    model = nn.Linear(3, 3, seed=1)
    if freeze_bias:
        model.bias.requires_grad = False
    opt = optim.SGD(model.parameters(), lr=0.1, fused=fused)
    x = mg.tensor(np.arange(12.0).reshape(4, 3) / 7)
    opt.zero_grad()
    for _ in range(backwards):
        y = x
        for _ in range(uses):
            y = model(y)
        (y * y).sum().backward()
    return model, opt


@pytest.mark.parametrize("uses,backwards", [(1, 1), (2, 1), (3, 1), (1, 2), (2, 3)])
def test_linear_writes_its_weight_gradient_straight_into_the_fused_buffer(uses, backwards):
    # Linear's VJP writes g.T @ x into the weight's gradient buffer when that product is the
    # whole .grad (gradient_product); a layer used several times, or a second backward()
    # without zero_grad, must still sum every contribution, exactly as without the fast path.
    fused, _ = _linear_grads(True, uses, backwards)
    plain, _ = _linear_grads(False, uses, backwards)
    for p, q in zip(fused.parameters(), plain.parameters()):
        np.testing.assert_array_equal(p.grad, q.grad)
    assert not np.array_equal(fused.weight.grad, np.zeros((3, 3)))


def test_linear_gradient_product_lands_in_the_buffer_and_nowhere_else():
    model, opt = _linear_grads(True)
    group = opt._groups[0]
    assert model.weight.grad is model.weight._grad_buffer  # the buffer itself: no copy made
    assert np.shares_memory(model.weight.grad, group.grad)
    assert not np.shares_memory(model.weight.grad, model.bias.grad)
    # a frozen parameter gets no gradient, and its buffer is not written either
    frozen, opt = _linear_grads(True, freeze_bias=True)
    assert frozen.bias.grad is None and not frozen.bias._grad_buffer.any()


def test_gradient_product_falls_back_to_a_new_array():
    # another dtype than the buffer's: the plain product, then copied in as before
    w = nn.Parameter(np.zeros((2, 3), dtype=np.float32))
    optim.SGD([w], lr=0.1)
    g = np.ones((4, 2), dtype=np.float64)
    x = np.ones((4, 3), dtype=np.float64)
    out = gradient_product(g.T, x, w)
    assert out is not w._grad_buffer and out.dtype == np.float64
    assert out.tolist() == [[4.0] * 3] * 2


def test_a_result_made_a_leaf_later_gets_its_gradient():
    # As in PyTorch: z = torch.tensor([1., 2.]) * 2; z.requires_grad = True;
    # (z * 3).sum().backward() gives z.grad = [3., 3.] (it raised AttributeError here).
    z = mg.tensor([1.0, 2.0]) * 2
    z.requires_grad = True
    (z * 3).sum().backward()
    assert z.grad.tolist() == [3.0, 3.0]
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    with mg.no_grad():
        y = x * 2
    y.requires_grad = True
    (y * y).sum().backward()
    assert y.grad.tolist() == [4.0, 8.0] and x.grad is None
