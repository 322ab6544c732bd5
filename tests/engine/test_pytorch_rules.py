"""Issue 12: the rules minigrad takes from PyTorch that the value table cannot show.

(Values, gradients and errors against PyTorch are in test_torch_parity.py; finite differences
of every new operation in test_tensor_ops.py.) PyTorch's behaviour is stated beside each
check.
"""
from __future__ import annotations

import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F
import minigrad.nn as nn
from minigrad.tensor import op

from tests.support.engine_helpers import NAMESPACES, host, make, namespace


# --- gradcheck never passes a NaN or inf gradient --------------------------------------------


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_gradcheck_fails_on_a_nan_or_inf_gradient(bad):
    def broken(x):  # forward 2x, backward g * bad
        return op(x.data * 2, (x,), lambda g: g * bad, name="broken")

    result = mg.gradcheck(broken, mg.tensor([1.0, 2.0]))
    assert not result and result.input == 0 and result.index == (0,)
    assert "backward gave" in result.message
    with pytest.raises(AssertionError, match="finite differences"):
        mg.gradcheck(broken, mg.tensor([1.0, 2.0]), raise_on_fail=True)


def test_gradcheck_fails_when_the_function_itself_is_nan():
    # sqrt at -1 is NaN in both directions: the differences are NaN, so nothing can agree
    assert not mg.gradcheck(lambda x: x.sqrt(), mg.tensor([-1.0]))


# --- dtypes: a float32 tensor stays float32; a leaf's grad is in the leaf's dtype ------------


@pytest.mark.parametrize("ns", NAMESPACES)
def test_float32_stays_float32_and_leaf_grads_keep_their_dtype(ns):
    with namespace(ns) as xp:
        f32 = make(xp, [1.0, 2.0], dtype="float32")
        f64 = make(xp, [0.5, 0.25])
        # torch: float32 with a Python or NumPy float, an int64 array or a 0-d float64 -> float32
        for out in (f32 * np.float64(2.0), f32 * np.int64(3), f32 + np.float32(1),
                    f32 + mg.Tensor(xp.asarray(np.array([1, 2]))),
                    f32 * mg.Tensor(xp.asarray(np.array(0.5)))):
            assert out.dtype == xp.float32, out.dtype
        mixed = f32 * f64  # torch: float32 * float64 (both with axes) -> float64
        assert mixed.dtype == xp.float64
        mixed.sum().backward()
        assert f32.grad.dtype == xp.float32 and f64.grad.dtype == xp.float64  # torch: the same
        np.testing.assert_allclose(host(xp, f32.grad), [0.5, 0.25])


def test_python_numbers_and_integer_inputs_give_float64():
    """Kept from NumPy on purpose (the course compares exactly): PyTorch would give float32."""
    assert mg.tensor([1.0, 2.0]).dtype == np.float64
    assert (mg.tensor([1, 2]) * 0.5).dtype == np.float64
    assert mg.where(mg.tensor([True, False]), 1.0, 0.0).dtype == np.float64
    assert mg.zeros(2).dtype == np.float64 and mg.arange(3).dtype == np.int64


@pytest.mark.parametrize("data", ["abc", None, {}, {"a": 1}, object(), [1, "a"]])
def test_tensor_refuses_what_is_not_numbers(data):
    with pytest.raises(TypeError, match="expected numbers"):  # torch: TypeError / ValueError
        mg.tensor(data)


# --- where, maximum, minimum with numbers ----------------------------------------------------


def test_where_and_maximum_with_numbers():
    cond = mg.tensor([True, False, True])
    np.testing.assert_array_equal(mg.where(cond, 1.0, 0.0).data, [1.0, 0.0, 1.0])
    x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    mg.where(cond.data, 0.0, x).sum().backward()
    np.testing.assert_array_equal(x.grad, [0, 1, 0])
    np.testing.assert_array_equal(mg.maximum(x, 2.0).data, [2, 2, 3])
    np.testing.assert_array_equal(mg.minimum(2.0, x).data, [1, 2, 2])
    with pytest.raises(TypeError, match="maximum: at least one argument must be a Tensor"):
        mg.maximum(1.0, 2.0)  # torch: TypeError, argument 'input' must be Tensor
    with pytest.raises(TypeError, match="where: condition must be a boolean"):
        mg.where(mg.tensor([1.0]), 1.0, 0.0)


# --- axes: int, tuple, list, dim=; validated ---------------------------------------------------


def test_axis_and_dim_are_one_argument():
    x = mg.tensor(np.arange(24.0).reshape(2, 3, 4))
    for kwargs in ({"axis": (0, 2)}, {"axis": [0, 2]}, {"dim": (0, 2)}, {"dim": [-3, -1]}):
        np.testing.assert_array_equal(x.sum(**kwargs).data, [60, 92, 124])
    assert x.mean(dim=1, keepdim=True).shape == (2, 1, 4)
    with pytest.raises(TypeError, match="not both"):
        x.sum(axis=0, dim=1)
    with pytest.raises(ValueError, match="names an axis twice"):
        x.sum(axis=(1, -2))
    with pytest.raises(mg.AxisError, match="axis 3 is out of range"):
        x.sum(axis=3)
    with pytest.raises(IndexError):  # AxisError is an IndexError too (as PyTorch)
        x.mean(dim=-4)


def test_transpose_swaps_two_axes_or_permutes_all():
    x = mg.tensor(np.arange(24.0).reshape(2, 3, 4))
    assert x.transpose(0, 2).shape == (4, 3, 2)  # torch.transpose
    assert x.transpose(2, 0, 1).shape == (4, 2, 3)  # numpy.transpose
    assert x.transpose().shape == (4, 3, 2) and x.permute(1, 2, 0).shape == (3, 4, 2)
    with pytest.raises(ValueError, match="two axes to swap or a permutation"):
        x.transpose(0, 1, 2, 3)
    with pytest.raises(ValueError, match="not a permutation"):
        x.transpose(0, 0, 1)
    with pytest.raises(ValueError, match="not a permutation"):
        x.permute(0, 1)


# --- max and min: the two forms ----------------------------------------------------------------


def test_max_with_dim_is_a_named_pair():
    x = mg.tensor([[1.0, 5.0], [7.0, 7.0]], requires_grad=True)
    result = x.max(dim=1)
    values, indices = result
    assert result.values is values and result.indices is indices  # torch.return_types.max
    np.testing.assert_array_equal(indices.data, [1, 0])
    assert not indices.requires_grad and indices.dtype == np.int64
    assert x.max(1).shape == (2,)  # positional: NumPy's axis, the values only


# --- operations without a useful derivative ----------------------------------------------------


def test_step_functions_have_zero_gradient_and_floordiv_none():
    x = mg.tensor([-1.5, 0.3, 2.5], requires_grad=True)
    (x.sign() + x.floor() + x.ceil() + x.round()).sum().backward()
    np.testing.assert_array_equal(x.grad, [0, 0, 0])  # torch: zeros
    q = x // 2.0
    assert not q.requires_grad  # torch: "derivative for floor_divide is not implemented"
    np.testing.assert_array_equal(q.data, [-1, 0, 1])
    assert not (x > 0).requires_grad and not x.argmax().requires_grad
    assert not x.isnan().requires_grad


def test_integer_tensors_keep_their_dtype_through_step_functions():
    i = mg.tensor([-3, 0, 4])
    assert i.floor().dtype == np.int64 and i.sign().dtype == np.int64
    np.testing.assert_array_equal((i // 2).data, [-2, 0, 2])
    np.testing.assert_array_equal((i % 3).data, [0, 0, 1])


# --- cross_entropy: wrong targets are errors, on every path -------------------------------------


@pytest.mark.parametrize("kwargs", [{}, {"reduction": "sum"}, {"label_smoothing": 0.1},
                                    {"weight": np.ones(3)}])
@pytest.mark.parametrize("bad", [3, -1, -2])
def test_cross_entropy_target_out_of_range_is_an_error(kwargs, bad):
    z = mg.tensor(np.zeros((2, 3)), requires_grad=True)
    # torch: IndexError "Target 3 is out of bounds." (-100 alone is ignore_index)
    with pytest.raises(IndexError, match=f"target {bad} \\(row 1\\) is out of range"):
        F.cross_entropy(z, np.array([0, bad]), **kwargs)


def test_one_based_labels_no_longer_train_silently():
    z = mg.tensor(np.zeros((3, 3)))
    with pytest.raises(IndexError, match="1-based"):
        F.cross_entropy(z, np.array([1, 2, 3]))


def test_cross_entropy_argument_errors():
    z = mg.tensor(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="reduction must be"):
        F.cross_entropy(z, np.array([0, 1]), reduction="avg")
    with pytest.raises(ValueError, match="label_smoothing must be in"):
        F.cross_entropy(z, np.array([0, 1]), label_smoothing=1.5)
    with pytest.raises(ValueError, match=r"weight must have shape \(3,\)"):
        F.cross_entropy(z, np.array([0, 1]), weight=np.ones(2))


# --- creation functions --------------------------------------------------------------------------


def test_creation_functions():
    assert mg.zeros(2, 3).shape == (2, 3) and mg.ones((2,)).data.tolist() == [1.0, 1.0]
    assert mg.full((2,), 3).dtype == np.int64 and mg.full((2,), 0.5).dtype == np.float64
    assert mg.full((1,), True).dtype == np.bool_  # torch: the fill value's type
    assert mg.arange(0, 1, 0.25).data.tolist() == [0, 0.25, 0.5, 0.75]
    np.testing.assert_array_equal(mg.eye(2, 3).data, np.eye(2, 3))
    a, b = mg.randn(3, generator=7), mg.randn(3, generator=7)
    np.testing.assert_array_equal(a.data, b.data)  # one seed, one draw
    r = mg.rand(2, 2, generator=np.random.default_rng(1), dtype="float32", requires_grad=True)
    assert r.dtype == np.float32 and r.requires_grad and (0 <= r.data).all()
    assert (r.data < 1).all()
    like = mg.full_like(r, 2.0)
    assert like.dtype == np.float32 and like.shape == (2, 2) and not like.requires_grad
    assert mg.zeros_like(r, dtype="int64").dtype == np.int64
    assert mg.ones_like(r).data.sum() == 4
    with pytest.raises(ValueError, match="non-negative ints"):
        mg.zeros(2, -1)
    with pytest.raises(ValueError, match="step must not be 0"):
        mg.arange(0, 1, 0)


def test_creation_on_array_api_strict_through_like():
    with namespace("strict") as xp:
        x = make(xp, [1.0, 2.0], dtype="float32")
        z = mg.zeros_like(x)
        assert type(z.data) is type(x.data) and z.dtype == xp.float32


# --- nn: containers and activation layers ------------------------------------------------------


def test_module_list_and_dict_name_parameters_the_pytorch_way():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([nn.Linear(2, 3, seed=0), nn.Linear(3, 1, seed=1)])
            self.heads = nn.ModuleDict({"a": nn.Linear(1, 1, seed=2)})

        def forward(self, x):
            for layer in self.layers:
                x = layer(x).tanh()
            return self.heads["a"](x)

    net = Net()
    names = [n for n, _ in net.named_parameters()]
    assert names == ["layers.0.weight", "layers.0.bias", "layers.1.weight", "layers.1.bias",
                     "heads.a.weight", "heads.a.bias"]  # torch: the same names
    assert len(net.layers) == 2 and "a" in net.heads and list(net.heads) == ["a"]
    assert net(mg.tensor(np.ones((4, 2)))).shape == (4, 1)
    net.layers.append(nn.ReLU())
    assert isinstance(net.layers[-1], nn.ReLU) and len(net.layers[1:]) == 2
    assert "(layers): ModuleList(" in repr(net)
    with pytest.raises(TypeError, match="expected a Module"):
        net.layers.append(nn.ReLU)
    with pytest.raises(KeyError, match="without '.'"):
        net.heads["a.b"] = nn.ReLU()
    with pytest.raises(KeyError, match="has no module 'b'"):
        net.heads["b"]
    assert set(net.state_dict()) == set(names)


def test_plain_lists_of_modules_still_work():
    """Beyond PyTorch (the course teaches it): a plain list attribute is walked too."""
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = [nn.Linear(2, 2, seed=0)]

    assert [n for n, _ in Net().named_parameters()] == ["layers.0.weight", "layers.0.bias"]


@pytest.mark.parametrize("layer,fn", [
    (nn.GELU(), F.gelu), (nn.GELU("tanh"), lambda x: F.gelu(x, approximate="tanh")),
    (nn.SiLU(), F.silu), (nn.ELU(0.5), lambda x: F.elu(x, 0.5)),
    (nn.Softplus(2.0, 5.0), lambda x: F.softplus(x, 2.0, 5.0)),
    (nn.Hardtanh(-2.0, 0.5), lambda x: F.hardtanh(x, -2.0, 0.5)),
    (nn.LogSigmoid(), F.logsigmoid), (nn.Softmax(0), lambda x: F.softmax(x, 0)),
    (nn.LogSoftmax(1), lambda x: F.log_softmax(x, 1)),
])
def test_activation_layers_call_their_functions(layer, fn):
    x = mg.tensor(np.linspace(-3, 3, 12).reshape(3, 4))
    np.testing.assert_array_equal(layer(x).data, fn(x).data)
    assert repr(layer).startswith(type(layer).__name__ + "(")
    assert list(layer.parameters()) == []


def test_activation_argument_errors():
    with pytest.raises(ValueError, match="approximate must be"):
        nn.GELU("fast")
    with pytest.raises(ValueError, match="min_val 1 is larger than max_val 0"):
        nn.Hardtanh(1, 0)


def test_on_a_gpu_targets_are_not_read_back_but_poison_the_loss(monkeypatch):
    """On a GPU reading the targets would wait for the device: a bad target gives NaN instead.

    Simulated on NumPy by saying the arrays are not in host memory.
    """
    monkeypatch.setattr(F, "_host_values", lambda array: False)
    z = mg.tensor(np.array([[2.0, 1.0, 0.1], [0.0, 1.0, 0.0]]), requires_grad=True)
    good = F.cross_entropy(z, np.array([0, 1]))
    assert np.isfinite(good.item())
    np.testing.assert_allclose(good.item(), 0.4842373651049423, rtol=1e-12)  # torch: the same
    assert np.isnan(F.cross_entropy(z, np.array([0, 3])).item())
    assert np.isnan(F.cross_entropy(z, np.array([-1, 1])).item())


X23 = mg.tensor(np.ones((2, 3)))


@pytest.mark.parametrize("call,error,words", [
    (lambda: X23.sum(axis=1.5), TypeError, "an axis must be an int; got 1.5"),
    (lambda: X23.mean(dim="a"), TypeError, "an axis must be an int"),
    (lambda: F.cross_entropy(X23, "abc"), TypeError, "targets must be an integer array"),
    (lambda: X23.var(correction="a"), TypeError, "correction must be a number"),
    (lambda: X23 + None, TypeError, "expected numbers"),
    (lambda: X23.clamp("a"), TypeError, "min must be a number"),
    (lambda: X23.gather(1, [[0.5]]), TypeError, "index must hold integers"),
    (lambda: X23.unsqueeze(0.5), IndexError, "dim must be an int"),
    (lambda: X23.masked_fill(np.array([1, 0, 1]), 0.0), TypeError, "mask must be boolean"),
    (lambda: F.one_hot(mg.tensor([0.5])), TypeError, "labels must be integers"),
    (lambda: mg.cat([]), ValueError, "at least one tensor"),
    (lambda: mg.zeros(2.5), ValueError, "non-negative ints"),
    (lambda: F.gelu(X23, approximate="x"), ValueError, "approximate must be"),
])
def test_wrong_arguments_name_what_was_expected(call, error, words):
    with pytest.raises(error, match=words.replace("(", r"\(").replace(".", r"\.")):
        call()


# --- GELU's tails: PyTorch's infinities, NaNs and signed zeros ---------------------------------
# PyTorch 2.13, F.gelu(x, approximate="tanh") at these x, forward and backward of .sum(); the
# fast tanh form (through exp) must give the same where tanh's saturation gives exact values.
_GELU_TAILS = [-np.inf, np.inf, np.nan, -30.0, -1e30, 1e30, -100.0, 0.0, -0.0]
_GELU_TANH_PINNED = {
    "float32": ([np.nan, np.inf, np.nan, -0.0, -0.0, 1e30, -0.0, 0.0, -0.0],
                [np.nan, np.nan, np.nan, 0.0, np.nan, np.nan, 0.0, 0.5, 0.5]),
    "float64": ([np.nan, np.inf, np.nan, -0.0, -0.0, 1e30, -0.0, 0.0, -0.0],
                [np.nan, np.nan, np.nan, 0.0, 0.0, 1.0, 0.0, 0.5, 0.5]),
}


@pytest.mark.parametrize("dtype", sorted(_GELU_TANH_PINNED))
def test_gelu_tanh_tails_are_pytorchs(dtype):
    want_y, want_g = (np.array(v, dtype=dtype) for v in _GELU_TANH_PINNED[dtype])
    x = mg.Tensor(np.array(_GELU_TAILS, dtype=dtype), requires_grad=True)
    with np.errstate(invalid="ignore", over="ignore"):  # 1e30 squared, inf * 0: as PyTorch, NaN
        y = F.gelu(x, approximate="tanh")
        y.sum().backward()
    np.testing.assert_array_equal(y.data, want_y)
    number = ~np.isnan(want_y)  # a NaN's sign bit means nothing
    np.testing.assert_array_equal(np.signbit(y.data[number]), np.signbit(want_y[number]))
    np.testing.assert_array_equal(x.grad, want_g)
