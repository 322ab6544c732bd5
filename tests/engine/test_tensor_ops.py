"""Every operation's VJP against finite differences, on NumPy and on array-api-strict.

Shapes come from hypothesis, broadcasting cases included. Results and gradients must stay
arrays of the input's own namespace.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra.numpy import array_shapes, broadcastable_shapes, mutually_broadcastable_shapes

import minigrad as mg
import minigrad.functional as F
from minigrad.broadcast import unbroadcast

from tests.support.engine_helpers import NAMESPACES, host, make, namespace


def check(fn, *tensors, xp):
    """gradcheck ``fn`` and check that outputs and gradients stay in namespace ``xp``."""
    result = mg.gradcheck(fn, *tensors)
    assert result, result.message
    fresh = [mg.Tensor(t.data, requires_grad=True) for t in tensors]
    out = fn(*fresh)
    out.backward(out._xp.ones_like(out.data))
    for array in [out.data] + [t.grad for t in fresh if t.grad is not None]:
        assert same_kind(array, tensors[0].data), (type(array), type(tensors[0].data))


def same_kind(array, like) -> bool:
    """NumPy's 0-d results are NumPy scalars (np.generic): still NumPy; all else must match."""
    if isinstance(like, np.ndarray):
        return isinstance(array, (np.ndarray, np.generic))
    return type(array) is type(like)


def values(shape, seed, low=-2.0, high=2.0, away_from_zero=False):
    rng = np.random.default_rng(seed)
    v = rng.uniform(low, high, size=shape)
    if away_from_zero:
        v = np.where(np.abs(v) < 0.3, 0.3 * np.sign(v) + (v == 0) * 0.3, v)
    return v


UNARY = {
    "neg": lambda a: -a,
    "exp": lambda a: a.exp(),
    "log": lambda a: (a * a + 0.5).log(),
    "sqrt": lambda a: (a * a + 0.5).sqrt(),
    "tanh": lambda a: a.tanh(),
    "sigmoid": lambda a: a.sigmoid(),
    "relu": lambda a: a.relu(),
    "leaky_relu": lambda a: a.leaky_relu(0.1),
    "abs": lambda a: abs(a),
    "pow_scalar": lambda a: (a * a + 1.0) ** 1.5,
    "square": lambda a: a ** 2,
    "rsub": lambda a: 1 - a,
    "rdiv": lambda a: 2.0 / (a * a + 1.0),
    "rpow": lambda a: 2.0 ** a,
    "scalar_ops": lambda a: (a * 3.0 + 2.0 - 1.0) / 4.0,
    # issue 12: PyTorch's elementwise operations and activations
    "sin": lambda a: a.sin(),
    "cos": lambda a: mg.cos(a),
    "tan": lambda a: (a * 0.5).tan(),
    "log1p": lambda a: (a * a).log1p(),
    "expm1": lambda a: a.expm1(),
    "rsqrt": lambda a: (a * a + 0.5).rsqrt(),
    "clamp": lambda a: a.clamp(-1.0, 1.5),
    "clip_min": lambda a: mg.clip(a, min=0.5),
    "sign_floor_ceil_round": lambda a: a.sign() + a.floor() + mg.ceil(a) + a.round() + a,
    "mod_scalar": lambda a: a % 0.7,
    "masked_fill": lambda a: a.masked_fill(a.data > 1.0, 2.0),
    "gelu": lambda a: F.gelu(a * 2),
    "gelu_tanh": lambda a: F.gelu(a * 2, approximate="tanh"),
    "silu": lambda a: F.silu(a),
    "elu": lambda a: F.elu(a, alpha=0.5),
    "softplus": lambda a: F.softplus(a * 3, beta=1.5, threshold=4.0),
    "hardtanh": lambda a: F.hardtanh(a, -0.8, 1.2),
    "logsigmoid": lambda a: F.logsigmoid(a * 4),
    "x_pow_0": lambda a: a ** 0 + a,
}

AWAY_FROM_KINKS = {"relu", "leaky_relu", "abs", "elu"}


@pytest.mark.parametrize("ns", NAMESPACES)
@pytest.mark.parametrize("name", sorted(UNARY))
@given(shape=array_shapes(min_dims=0, max_dims=3, max_side=4), seed=st.integers(0, 2**16))
def test_unary_vjp(ns, name, shape, seed):
    with namespace(ns) as xp:
        a = make(xp, values(shape, seed, away_from_zero=name in AWAY_FROM_KINKS))
        check(UNARY[name], a, xp=xp)


BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / (b * b + 0.5),
    "pow": lambda a, b: (a * a + 0.5) ** b,
    "maximum": lambda a, b: mg.maximum(a, b),
    "minimum": lambda a, b: mg.minimum(a, b),
    "where": lambda a, b: mg.where(a.data > 0, a, b),
    "mod": lambda a, b: a % (b * b + 0.5),
    "pow_at_any_base": lambda a, b: (a * a + 0.5) ** (b * 0.5),
}


@pytest.mark.parametrize("ns", NAMESPACES)
@pytest.mark.parametrize("name", sorted(BINARY))
@given(shapes=mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3),
       seed=st.integers(0, 2**16))
def test_binary_vjp_with_broadcasting(ns, name, shapes, seed):
    shape_a, shape_b = shapes.input_shapes
    with namespace(ns) as xp:
        a = make(xp, values(shape_a, seed))
        b = make(xp, values(shape_b, seed + 1) + (0.05 if name in {"maximum", "minimum"} else 0))
        check(BINARY[name], a, b, xp=xp)
        out = BINARY[name](a, b)
        assert out.shape == shapes.result_shape


MATMUL_SHAPES = [((3,), (3,)), ((3,), (3, 2)), ((2, 3), (3,)), ((2, 3), (3, 4)),
                 ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)), ((5, 1, 2, 3), (4, 3, 2)),
                 ((4,), (2, 4, 3))]


@pytest.mark.parametrize("ns", NAMESPACES)
@pytest.mark.parametrize("shape_a,shape_b", MATMUL_SHAPES)
def test_matmul_vjp(ns, shape_a, shape_b):
    with namespace(ns) as xp:
        a, b = make(xp, values(shape_a, 1)), make(xp, values(shape_b, 2))
        check(lambda a, b: a @ b, a, b, xp=xp)
        assert (a @ b).shape == np.matmul(np.zeros(shape_a), np.zeros(shape_b)).shape


axes = st.one_of(st.none(), st.integers(-3, 2), st.tuples(st.integers(0, 2), st.integers(0, 2)))


REDUCTIONS = {  # minigrad's call, NumPy's answer
    "sum": (lambda a, **k: a.sum(**k), np.sum),
    "mean": (lambda a, **k: a.mean(**k), np.mean),
    "max": (lambda a, **k: a.max(**k), np.max),
    "min": (lambda a, **k: a.min(**k), np.min),
    "var": (lambda a, **k: a.var(correction=0, **k), np.var),
    "std": (lambda a, **k: a.std(correction=0, **k), np.std),
    "prod": (lambda a, **k: a.prod(**k), np.prod),
    "logsumexp": (lambda a, **k: a.logsumexp(**k),
                  lambda x, axis, keepdims: np.log(np.sum(np.exp(x), axis=axis, keepdims=keepdims))),
}


@pytest.mark.parametrize("ns", NAMESPACES)
@pytest.mark.parametrize("kind", sorted(REDUCTIONS))
@given(shape=array_shapes(min_dims=3, max_dims=3, max_side=4), axis=axes,
       keepdims=st.booleans(), as_dim=st.booleans(), seed=st.integers(0, 2**16))
def test_reduction_vjp(ns, kind, shape, axis, keepdims, as_dim, seed):
    if isinstance(axis, tuple) and axis[0] == axis[1]:
        axis = axis[0]
    ours, numpys = REDUCTIONS[kind]
    # dim=/keepdim= (PyTorch) and axis=/keepdims= (NumPy) are the same; a list is a tuple
    # (max and min with dim= are PyTorch's (values, indices) form: tested separately)
    args = {"dim": list(axis) if isinstance(axis, tuple) else axis, "keepdim": keepdims} \
        if as_dim and kind not in {"max", "min"} else {"axis": axis, "keepdims": keepdims}
    with namespace(ns) as xp:
        a = make(xp, values(shape, seed))
        if kind == "std" and np.any(np.asarray(np.std(host(xp, a.data), axis=axis)) == 0):
            return  # std's gradient is 0 where all values are equal (as PyTorch); no differences
        fn = lambda a: ours(a, **args)
        check(fn, a, xp=xp)
        expected = numpys(host(xp, a.data), axis=axis, keepdims=keepdims)
        np.testing.assert_allclose(host(xp, fn(a).data), expected, rtol=1e-12)


#: (shape, k): the shapes layer norm and attention give the sums as products with ones,
#: empty rows and an empty batch included.
PRODUCT_SUMS = [((5, 7), 1), ((2, 3, 4), 1), ((2, 3, 4), 2), ((4,), 1), ((3, 0), 1),
                ((0, 3), 1), ((2, 0, 3), 2), ((2, 3, 0), 1)]


@pytest.mark.parametrize("ns", NAMESPACES)
@pytest.mark.parametrize("shape, k", PRODUCT_SUMS)
@pytest.mark.filterwarnings("ignore:Mean of empty slice:RuntimeWarning",
                            "ignore:invalid value encountered:RuntimeWarning")
def test_sums_as_products_with_ones_are_the_reductions(ns, shape, k):
    """``reductions._row_sums`` (sums and means over the last ``k`` axes, kept) and
    ``_column_sums`` (sums over the others) give what ``sum`` and ``mean`` give, empty rows
    included (a mean of none is NaN)."""
    from minigrad.reductions import _column_sums, _row_sums
    a = np.random.default_rng(len(shape) + k).normal(size=shape)
    last, lead = tuple(range(a.ndim - k, a.ndim)), tuple(range(a.ndim - k))
    with namespace(ns) as xp:
        x = make(xp, a).data
        np.testing.assert_allclose(host(xp, _row_sums(xp, x, k)),
                                   np.sum(a, axis=last, keepdims=True), rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(host(xp, _row_sums(xp, x, k, mean=True)),
                                   np.mean(a, axis=last, keepdims=True), rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(host(xp, _column_sums(xp, x, k)), np.sum(a, axis=lead),
                                   rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("ns", NAMESPACES)
def test_max_ties_split_the_gradient_but_dim_sends_it_to_the_index(ns):
    """PyTorch: x.max() and amax split the gradient among tied maxima; max(dim=) sends it to
    the index it returns (the first maximum)."""
    with namespace(ns) as xp:
        a = make(xp, [[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]])
        a.max(axis=1).sum().backward()  # torch.amax(a, 1): [[0, .5, .5], [.5, .5, 0]]
        np.testing.assert_array_equal(host(xp, a.grad), [[0, 0.5, 0.5], [0.5, 0.5, 0]])
        a.grad = None
        values, indices = a.max(dim=1)  # torch: values [3, 2], indices [1, 0]
        np.testing.assert_array_equal(host(xp, indices.data), [1, 0])
        values.sum().backward()  # torch: [[0, 1, 0], [1, 0, 0]]
        np.testing.assert_array_equal(host(xp, a.grad), [[0, 1, 0], [1, 0, 0]])
        b = make(xp, [[5.0, 1.0], [5.0, 5.0]])
        b.max().backward()  # torch.max(b): a third each
        np.testing.assert_allclose(host(xp, b.grad), [[1 / 3, 0], [1 / 3, 1 / 3]])
        c = make(xp, [[5.0, 1.0], [0.0, 0.0]])
        c.min(axis=0).sum().backward()  # torch.amin(c, 0): [[0, 0], [1, 1]]
        np.testing.assert_array_equal(host(xp, c.grad), [[0, 0], [1, 1]])


SHAPE_OPS = {
    "reshape": lambda a: a.reshape(4, 6),
    "reshape_tuple": lambda a: a.reshape((2, -1)),
    "transpose": lambda a: a.transpose(),
    "transpose_axes": lambda a: a.transpose(1, 2, 0),
    "T": lambda a: a.T,
    "flatten": lambda a: a.flatten(),
    "flatten_from_1": lambda a: a.flatten(1),
    "slice": lambda a: a[1:, ::2, -1],
    "int_index": lambda a: a[0],
    "ellipsis": lambda a: a[..., 1],
    "concatenate": lambda a: mg.concatenate([a, a * 2.0, a[:, :1]], axis=1),
    "stack": lambda a: mg.stack([a, a.exp()], axis=-1),
    # issue 12: PyTorch's names and operations
    "transpose_swap": lambda a: a.transpose(0, 2),
    "permute": lambda a: a.permute(2, 0, 1),
    "view": lambda a: a.view(6, -1),
    "unsqueeze": lambda a: a.unsqueeze(1) * 2.0,
    "squeeze": lambda a: a[:, :1].squeeze(1),
    "expand": lambda a: a[:, :1].expand(5, 2, 3, 4),
    "cat_dim": lambda a: mg.cat([a, a[:1]], dim=0),
    "flatten_middle": lambda a: a.flatten(1, 2),
    "max_dim": lambda a: a.max(dim=1).values,
    "min_dim_keepdim": lambda a: a.min(dim=-1, keepdim=True)[0],
    "cumsum": lambda a: a.cumsum(dim=1),
    "tril": lambda a: a.tril(),
    "triu": lambda a: mg.triu(a, diagonal=1),
    "gather": lambda a: a.gather(2, a.argmax(dim=2, keepdim=True)),
    "gather_repeats": lambda a: a.gather(1, a._xp.asarray(np.array([[[0, 0, 2, 2]],
                                                                     [[1, 1, 1, 0]]]))),
    "prod_all": lambda a: (a * 0.5).prod(),
}


@pytest.mark.parametrize("ns", NAMESPACES)
@pytest.mark.parametrize("name", sorted(SHAPE_OPS))
def test_shape_op_vjp(ns, name):
    with namespace(ns) as xp:
        check(SHAPE_OPS[name], make(xp, values((2, 3, 4), 7)), xp=xp)


@pytest.mark.parametrize("ns", NAMESPACES)
def test_integer_array_indexing_adds_repeats(ns):
    with namespace(ns) as xp:
        a = make(xp, values((4,), 3))
        rows = xp.asarray(np.array([0, 2, 2, 3]))
        check(lambda a: a[rows], a, xp=xp)
        a[rows].sum().backward()
        np.testing.assert_array_equal(host(xp, a.grad), [1, 0, 2, 1])
        b = make(xp, values((3, 4), 4))
        cols = xp.asarray(np.array([1, 1, 3]))
        picks = xp.asarray(np.array([0, 0, 2]))
        check(lambda b: b[picks, cols], b, xp=xp)


def test_integer_array_on_leading_axis_of_a_matrix():
    a = mg.tensor(values((4, 3), 3), requires_grad=True)
    check(lambda a: a[[0, 2, 2, 3]], a, xp=np)
    a[[0, 2, 2, 3]].sum().backward()
    np.testing.assert_array_equal(a.grad[:, 0], [1, 0, 2, 1])


def test_mixed_index_needs_numpy_with_clear_error():
    with namespace("strict") as xp:
        a = make(xp, values((3, 4), 5))
        idx = xp.asarray(np.array([0, 2]))
        with pytest.raises((NotImplementedError, IndexError, TypeError)):
            a[idx, 1:].sum().backward()
    a = mg.tensor(values((3, 4), 5), requires_grad=True)
    check(lambda a: a[[0, 2, 2], 1:], a, xp=np)


@pytest.mark.parametrize("ns", NAMESPACES)
def test_functional_losses(ns):
    with namespace(ns) as xp:
        logits = make(xp, values((5, 4), 8, -3, 3))
        targets = xp.asarray(np.array([0, 3, 1, 1, 2]))
        check(lambda z: F.cross_entropy(z, targets), logits, xp=xp)
        check(lambda z: F.log_softmax(z), logits, xp=xp)
        check(lambda z: F.softmax(z, axis=0), logits, xp=xp)
        check(lambda z: F.nll_loss(F.log_softmax(z), targets), logits, xp=xp)
        other = make(xp, values((5, 4), 9), requires_grad=False)
        check(lambda z: F.mse_loss(z, other), logits, xp=xp)


def test_cross_entropy_matches_hand_numbers_and_stays_finite():
    z = mg.tensor([[2.0, 1.0, 0.1]], requires_grad=True)
    loss = F.cross_entropy(z, np.array([0]))
    p = np.exp([2.0, 1.0, 0.1]) / np.exp([2.0, 1.0, 0.1]).sum()
    assert loss.item() == pytest.approx(-np.log(p[0]), abs=1e-12)
    loss.backward()
    np.testing.assert_allclose(z.grad, [p - np.array([1, 0, 0])], atol=1e-12)
    big = mg.tensor([[1e4, -1e4, 0.0], [-1e4, 1e4, 1e4]], requires_grad=True)
    loss = F.cross_entropy(big, np.array([1, 2]))
    loss.backward()
    assert np.isfinite(loss.item()) and loss.item() == pytest.approx((2e4 + np.log(2)) / 2)
    assert np.all(np.isfinite(big.grad))
    np.testing.assert_allclose(big.grad, [[0.5, -0.5, 0.0], [0.0, 0.25, -0.25]], atol=1e-12)
    assert np.isfinite(F.log_softmax(big).data).all() and np.isfinite(F.softmax(big).data).all()


@pytest.mark.parametrize("ns", NAMESPACES)
def test_functional_losses_with_options(ns):
    """The new options of issue 12, each against finite differences on both namespaces."""
    with namespace(ns) as xp:
        logits = make(xp, values((5, 4), 8, -3, 3))
        targets = xp.asarray(np.array([0, 3, -100, 1, 2]))
        weight = xp.asarray(np.array([1.0, 2.0, 0.5, 1.5]))
        probs = xp.asarray(np.full((5, 4), 0.25))
        check(lambda z: F.cross_entropy(z, targets, weight=weight, label_smoothing=0.1), logits,
              xp=xp)
        check(lambda z: F.cross_entropy(z, targets, reduction="none"), logits, xp=xp)
        check(lambda z: F.cross_entropy(z, targets, reduction="sum", label_smoothing=0.3),
              logits, xp=xp)
        check(lambda z: F.cross_entropy(z, mg.Tensor(probs), weight=weight), logits, xp=xp)
        check(lambda z: F.nll_loss(F.log_softmax(z, dim=1), targets, weight=weight), logits,
              xp=xp)
        p = make(xp, values((3, 2), 3, 0.05, 0.95))
        t = make(xp, values((3, 2), 4, 0.0, 1.0), requires_grad=False)
        check(lambda p: F.binary_cross_entropy(p, t), p, xp=xp)
        check(lambda x: F.binary_cross_entropy_with_logits(x * 4, t, pos_weight=weight[:2]),
              p, xp=xp)
        images = make(xp, values((2, 4, 6, 6), 5))
        kernels = make(xp, values((6, 2, 3, 3), 6))
        check(lambda x, w: F.conv2d(x, w, stride=2, padding=1, dilation=2, groups=2),
              images, kernels, xp=xp)
        check(lambda x: F.avg_pool2d(x, 3, stride=2, padding=1), images, xp=xp)


@given(shape=array_shapes(min_dims=0, max_dims=3, max_side=4), data=st.data())
def test_unbroadcast_property(shape, data):
    """unbroadcast(g, shape) has ``shape`` and equals the sum over the broadcast copies."""
    big = data.draw(broadcastable_shapes(shape, min_dims=len(shape), max_dims=4, max_side=4)
                    .map(lambda s: np.broadcast_shapes(s, shape)))
    g = np.random.default_rng(0).normal(size=big)
    out = unbroadcast(g, shape)
    assert out.shape == tuple(shape)
    # Sum over copies: each input position collects the gradient of every output position
    # whose broadcast index maps back to it.
    index = np.arange(int(np.prod(shape))).reshape(shape)
    source = np.broadcast_to(index, big)
    expected = np.bincount(source.ravel(), weights=g.ravel(), minlength=index.size)
    np.testing.assert_allclose(out.ravel(), expected, atol=1e-12)
