"""conv2d and max_pool2d: against direct loops, finite differences, PyTorch's tie rule, and on
array-api-strict; their error messages; col2im as the adjoint of the sliding windows."""
from __future__ import annotations

import array_api_strict
import numpy as np
import pytest
from tests.support.engine_helpers import NAMESPACES, host, namespace
from hypothesis import given
from hypothesis import strategies as st

import minigrad as mg
import minigrad.functional as F
from minigrad import backend
from minigrad.graph import saved_bytes

# ---------------------------------------------------------------------------------------------
# The reference: the definitions written as plain loops, forward and backward.


def zero_padded(x, padding):
    """``x`` (N, C, H, W) with ``padding = (ph, pw)`` zeros around each image."""
    (ph, pw), (n, c, h, wd) = padding, x.shape
    xpad = np.zeros((n, c, h + 2 * ph, wd + 2 * pw))
    xpad[:, :, ph:ph + h, pw:pw + wd] = x
    return xpad


def loop_conv2d(x, w, b, stride, padding):
    """out[n, o, i, j] = b[o] + sum_{c,a,e} w[o, c, a, e] * xpad[n, c, i*sh + a, j*sw + e]."""
    sh, sw = stride
    xpad = zero_padded(x, padding)
    n, _, hp, wp = xpad.shape
    c_out, _, kh, kw = w.shape
    oh, ow = (hp - kh) // sh + 1, (wp - kw) // sw + 1
    out = np.zeros((n, c_out, oh, ow))
    for i_n in range(n):
        for o in range(c_out):
            for i in range(oh):
                for j in range(ow):
                    patch = xpad[i_n, :, i * sh:i * sh + kh, j * sw:j * sw + kw]
                    out[i_n, o, i, j] = np.sum(patch * w[o]) + (b[o] if b is not None else 0.0)
    return out


def loop_conv2d_backward(g, x, w, stride, padding):
    """The gradients of sum(g * conv2d(x, w, b)) by the chain rule, one output at a time."""
    (sh, sw), (ph, pw) = stride, padding
    h, wd = x.shape[2:]
    _, _, kh, kw = w.shape
    xpad = zero_padded(x, padding)
    dxpad, dw = np.zeros_like(xpad), np.zeros_like(w)
    for i_n, o, i, j in np.ndindex(*g.shape):
        rows, cols = slice(i * sh, i * sh + kh), slice(j * sw, j * sw + kw)
        dxpad[i_n, :, rows, cols] += g[i_n, o, i, j] * w[o]
        dw[o] += g[i_n, o, i, j] * xpad[i_n, :, rows, cols]
    return dxpad[:, :, ph:ph + h, pw:pw + wd], dw, g.sum(axis=(0, 2, 3))


def loop_max_pool2d(x, kernel, stride):
    """Max pooling by loops: the output, and a function mapping the output's gradient to the
    input's (each window's gradient goes to its first maximum in row-major order, or, in a
    window with a NaN, to its last NaN: PyTorch's rule)."""
    (kh, kw), (sh, sw) = kernel, stride
    n, c, h, w = x.shape
    oh, ow = (h - kh) // sh + 1, (w - kw) // sw + 1
    out = np.zeros((n, c, oh, ow))
    first = {}
    for i_n, i_c, i, j in np.ndindex(n, c, oh, ow):
        window = x[i_n, i_c, i * sh:i * sh + kh, j * sw:j * sw + kw]
        out[i_n, i_c, i, j] = window.max()
        nans = np.flatnonzero(np.isnan(window))
        at = nans[-1] if len(nans) else np.argmax(window)  # argmax: the first maximum
        a, e = np.unravel_index(at, window.shape)
        first[i_n, i_c, i, j] = (i * sh + a, j * sw + e)

    def backward(g):
        dx = np.zeros_like(x)
        for (i_n, i_c, i, j), (r, s) in first.items():
            dx[i_n, i_c, r, s] += g[i_n, i_c, i, j]
        return dx

    return out, backward


CONV_CASES = [  # (N, C_in, H, W), (C_out, kh, kw), stride, padding
    ((2, 1, 7, 7), (3, 3, 3), (1, 1), (0, 0)),
    ((3, 2, 8, 6), (4, 3, 2), (1, 1), (1, 1)),
    ((2, 3, 9, 9), (2, 3, 3), (2, 2), (1, 1)),
    ((1, 2, 7, 10), (3, 2, 4), (2, 3), (0, 2)),
    ((2, 4, 5, 5), (5, 1, 1), (1, 1), (0, 0)),
    ((2, 2, 6, 6), (3, 5, 5), (1, 1), (2, 2)),  # "same" padding
    ((2, 1, 5, 5), (2, 5, 5), (1, 1), (0, 0)),  # one window: output 1x1
]


@pytest.mark.parametrize("xshape, kshape, stride, padding", CONV_CASES)
def test_conv2d_matches_loops_forward_and_backward(xshape, kshape, stride, padding):
    rng = np.random.default_rng(0)
    c_out, kh, kw = kshape
    x = rng.standard_normal(xshape)
    w = rng.standard_normal((c_out, xshape[1], kh, kw))
    b = rng.standard_normal(c_out)
    X, W, B = (mg.tensor(a, requires_grad=True) for a in (x, w, b))
    y = F.conv2d(X, W, B, stride=stride, padding=padding)
    expected = loop_conv2d(x, w, b, stride, padding)
    assert y.shape == expected.shape
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-12, atol=1e-12)

    g = rng.standard_normal(y.shape)
    y.backward(g)
    dx, dw, db = loop_conv2d_backward(g, x, w, stride, padding)
    np.testing.assert_allclose(X.grad, dx, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(W.grad, dw, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(B.grad, db, rtol=1e-12, atol=1e-12)
    assert X.grad.shape == X.shape and W.grad.shape == W.shape and B.grad.shape == B.shape


@given(n=st.integers(1, 3), c=st.integers(1, 3), c_out=st.integers(1, 3),
       h=st.integers(1, 7), w=st.integers(1, 7), kh=st.integers(1, 4), kw=st.integers(1, 4),
       sh=st.integers(1, 3), sw=st.integers(1, 3), ph=st.integers(0, 2), pw=st.integers(0, 2),
       bias=st.booleans(), seed=st.integers(0, 2**16))
def test_conv2d_property_random_shapes(n, c, c_out, h, w, kh, kw, sh, sw, ph, pw, bias, seed):
    if kh > h + 2 * ph or kw > w + 2 * pw:
        return  # no window fits (an error, tested below)
    rng = np.random.default_rng(seed)
    x, wt = rng.standard_normal((n, c, h, w)), rng.standard_normal((c_out, c, kh, kw))
    b = rng.standard_normal(c_out) if bias else None
    X, W = mg.tensor(x, requires_grad=True), mg.tensor(wt, requires_grad=True)
    B = mg.tensor(b, requires_grad=True) if bias else None
    y = F.conv2d(X, W, B, stride=(sh, sw), padding=(ph, pw))
    np.testing.assert_allclose(y.numpy(), loop_conv2d(x, wt, b, (sh, sw), (ph, pw)), atol=1e-12)
    g = rng.standard_normal(y.shape)
    y.backward(g)
    dx, dw, db = loop_conv2d_backward(g, x, wt, (sh, sw), (ph, pw))
    np.testing.assert_allclose(X.grad, dx, atol=1e-12)
    np.testing.assert_allclose(W.grad, dw, atol=1e-12)
    if bias:
        np.testing.assert_allclose(B.grad, db, atol=1e-12)


@pytest.mark.parametrize("stride, padding", [(1, 0), (2, 1), ((1, 2), (2, 0))])
def test_conv2d_gradcheck(stride, padding):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 2, 5, 6))
    w = rng.standard_normal((3, 2, 3, 2))
    b = rng.standard_normal(3)
    result = mg.gradcheck(lambda x, w, b: F.conv2d(x, w, b, stride=stride, padding=padding),
                          x, w, b)
    assert result, result.message
    result = mg.gradcheck(lambda x, w: F.conv2d(x, w, stride=stride, padding=padding), x, w)
    assert result, result.message


def test_conv2d_composes_with_other_ops_in_gradcheck():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 1, 8, 8))
    w1, w2 = rng.standard_normal((2, 1, 3, 3)), rng.standard_normal((3, 2, 2, 2))

    def net(x, w1, w2):
        h = F.max_pool2d(F.conv2d(x, w1, padding=1).tanh(), 2)
        return F.conv2d(h, w2, stride=2)

    result = mg.gradcheck(net, x, w1, w2)
    assert result, result.message


def test_conv2d_computes_only_the_gradients_needed():
    rng = np.random.default_rng(3)
    x = mg.tensor(rng.standard_normal((2, 3, 6, 6)))  # an input image: no gradient
    w = mg.tensor(rng.standard_normal((4, 3, 3, 3)), requires_grad=True)
    y = F.conv2d(x, w)
    kept_with_weight = saved_bytes(y)
    y.sum().backward()
    assert x.grad is None and w.grad is not None

    frozen = mg.tensor(w.numpy())  # a frozen weight: the big im2col matrix is not kept
    x2 = mg.tensor(x.numpy(), requires_grad=True)
    y2 = F.conv2d(x2, frozen)
    assert saved_bytes(y2) < kept_with_weight
    y2.sum().backward()
    assert frozen.grad is None and x2.grad is not None
    np.testing.assert_allclose(x2.grad, loop_conv2d_backward(
        np.ones(y2.shape), x.numpy(), w.numpy(), (1, 1), (0, 0))[0], atol=1e-12)

    with mg.no_grad():
        assert not F.conv2d(x2, w).requires_grad


def test_conv2d_keeps_float32():
    rng = np.random.default_rng(4)
    x = mg.tensor(rng.standard_normal((2, 3, 8, 8)), dtype="float32", requires_grad=True)
    w = mg.tensor(rng.standard_normal((4, 3, 3, 3)), dtype="float32", requires_grad=True)
    b = mg.tensor(rng.standard_normal(4), dtype="float32", requires_grad=True)
    y = F.max_pool2d(F.conv2d(x, w, b, padding=1), 2)
    assert y.dtype == np.float32
    y.sum().backward()
    assert x.grad.dtype == w.grad.dtype == b.grad.dtype == np.float32
    expected = loop_conv2d(x.numpy().astype(np.float64), w.numpy().astype(np.float64),
                           b.numpy().astype(np.float64), (1, 1), (1, 1))
    np.testing.assert_allclose(F.conv2d(x, w, b, padding=1).numpy(), expected, rtol=1e-4,
                               atol=1e-4)


# ---------------------------------------------------------------------------------------------
# max_pool2d

POOL_CASES = [  # (N, C, H, W), kernel, stride
    ((2, 3, 8, 8), (2, 2), (2, 2)),
    ((2, 2, 9, 7), (2, 2), (2, 2)),  # odd sizes: the last row/column is dropped
    ((1, 2, 7, 7), (3, 3), (2, 2)),  # overlapping windows
    ((2, 1, 6, 9), (2, 3), (1, 2)),
    ((1, 1, 5, 5), (5, 5), (5, 5)),
    ((2, 2, 4, 4), (1, 1), (1, 1)),
]


@pytest.mark.parametrize("xshape, kernel, stride", POOL_CASES)
@pytest.mark.parametrize("values", ["continuous", "with_ties", "with_nan"])
def test_max_pool2d_matches_loops(xshape, kernel, stride, values):
    rng = np.random.default_rng(5)
    x = rng.standard_normal(xshape)
    if values != "continuous":
        x = np.round(x)  # many equal values inside windows
    if values == "with_nan":  # about one value in four: windows with one NaN, with several
        x[rng.random(xshape) < 0.25] = np.nan
    X = mg.tensor(x, requires_grad=True)
    y = F.max_pool2d(X, kernel, stride)
    expected, backward = loop_max_pool2d(x, kernel, stride)
    np.testing.assert_array_equal(y.numpy(), expected)
    g = rng.standard_normal(y.shape)
    y.backward(g)
    np.testing.assert_allclose(X.grad, backward(g), rtol=1e-15, atol=0)


def test_max_pool2d_ties_send_the_gradient_to_the_first_maximum():
    # One 2x2 window of equal values: PyTorch gives the whole gradient to the top-left one.
    x = mg.tensor(np.ones((1, 1, 2, 2)), requires_grad=True)
    F.max_pool2d(x, 2).sum().backward()
    np.testing.assert_array_equal(x.grad[0, 0], [[1.0, 0.0], [0.0, 0.0]])
    # The maximum at (0, 1) and (1, 0): the first in row-major order is (0, 1).
    x = mg.tensor(np.array([[[[0.0, 5.0], [5.0, 1.0]]]]), requires_grad=True)
    (F.max_pool2d(x, 2) * 3.0).sum().backward()
    np.testing.assert_array_equal(x.grad[0, 0], [[0.0, 3.0], [0.0, 0.0]])
    # An image upsampled by repeating pixels: every window is a tie; each window's gradient
    # lands once, on its top-left corner, and the total is kept.
    small = np.random.default_rng(6).standard_normal((2, 3, 4, 4))
    big = mg.tensor(small.repeat(2, axis=2).repeat(2, axis=3), requires_grad=True)
    y = F.max_pool2d(big, 2)
    np.testing.assert_array_equal(y.numpy(), small)
    g = np.random.default_rng(7).standard_normal(y.shape)
    y.backward(g)
    np.testing.assert_array_equal(big.grad[:, :, ::2, ::2], g)
    assert np.count_nonzero(big.grad[:, :, 1::2, :]) == 0
    assert np.count_nonzero(big.grad[:, :, :, 1::2]) == 0


@pytest.mark.parametrize("kernel, stride", [(2, 2), (3, 3), (2, 1)])
def test_max_pool2d_sends_a_nan_windows_gradient_to_its_last_nan_as_pytorch(kernel, stride):
    # PyTorch 2.13: max_pool2d(x, 2) of these 2x2 windows, then .sum().backward(), gives the
    # gradients on the right. The same window is tried on the 2x2 fast path, inside a 3x3
    # window (a -inf border: the general path) and with overlapping windows of stride 1.
    nan = np.nan
    for values, grad in [([nan, 1.0, 2.0, 3.0], [1.0, 0.0, 0.0, 0.0]),
                         ([1.0, nan, 2.0, nan], [0.0, 0.0, 0.0, 1.0]),
                         ([5.0, 1.0, nan, 3.0], [0.0, 0.0, 1.0, 0.0])]:
        x = np.full((1, 1, kernel, kernel), -np.inf)
        x[0, 0, :2, :2] = np.reshape(values, (2, 2))
        X = mg.tensor(x, requires_grad=True)
        y = F.max_pool2d(X, kernel, stride)
        y.backward(np.where(np.isnan(y.numpy()), 1.0, 0.0))  # the gradient of NaN windows only
        assert np.isnan(y.numpy()).any()
        np.testing.assert_array_equal(X.grad[0, 0, :2, :2], np.reshape(grad, (2, 2)),
                                      err_msg=str(values))


def test_max_pool2d_ties_in_overlapping_windows():
    x = np.zeros((1, 1, 3, 3))  # every 2x2 window (stride 1) is a tie of zeros
    X = mg.tensor(x, requires_grad=True)
    F.max_pool2d(X, 2, stride=1).sum().backward()
    _, backward = loop_max_pool2d(x, (2, 2), (1, 1))
    np.testing.assert_array_equal(X.grad, backward(np.ones((1, 1, 2, 2))))
    np.testing.assert_array_equal(X.grad[0, 0], [[1, 1, 0], [1, 1, 0], [0, 0, 0]])


def test_max_pool2d_gradcheck():
    rng = np.random.default_rng(8)
    x = rng.permutation(2 * 2 * 7 * 6).reshape(2, 2, 7, 6) / 10.0  # distinct: differentiable
    assert mg.gradcheck(lambda x: F.max_pool2d(x, 2), x)
    assert mg.gradcheck(lambda x: F.max_pool2d(x, (3, 2), stride=(2, 1)), x)


def test_max_pool2d_keeps_float32():
    x = mg.tensor(np.random.default_rng(9).standard_normal((2, 2, 4, 4)), dtype="float32",
                  requires_grad=True)
    y = F.max_pool2d(x, 2)
    assert y.dtype == np.float32
    y.sum().backward()
    assert x.grad.dtype == np.float32


# ---------------------------------------------------------------------------------------------
# Errors say what was expected and what came


def _t(*shape, dtype="float64"):
    return mg.tensor(np.zeros(shape), dtype=dtype)


@pytest.mark.parametrize("args, kwargs, error, words", [
    ((_t(2, 3, 8, 8), _t(4, 2, 3, 3)), {}, ValueError, ["3 channels", "expects 2"]),
    ((_t(3, 8, 8), _t(4, 3, 3, 3)), {}, ValueError, ["(N, C, H, W)", "(3, 8, 8)",
                                                       "x.reshape(1, *x.shape)"]),
    ((_t(2, 3, 8, 8), _t(4, 3, 3)), {}, ValueError, ["(C_out, C_in, kh, kw)", "(4, 3, 3)"]),
    ((_t(2, 3, 8, 8), _t(4, 3, 3, 3), _t(3)), {}, ValueError, ["bias of shape (4,)",
                                                               "got shape (3,)"]),
    ((_t(2, 3, 4, 4), _t(4, 3, 5, 5)), {}, ValueError, ["5x5 kernel is larger", "4x4"]),
    ((_t(2, 3, 8, 8), _t(4, 3, 3, 3)), {"stride": 0}, ValueError, ["stride must be >= 1"]),
    ((_t(2, 3, 8, 8), _t(4, 3, 3, 3)), {"padding": -1}, ValueError, ["padding must be >= 0"]),
    ((_t(2, 3, 8, 8), _t(4, 3, 3, 3)), {"stride": 1.5}, TypeError, ["int or a pair of ints"]),
    ((_t(2, 3, 8, 8), _t(4, 3, 3, 3)), {"padding": (1, 1, 1)}, TypeError, ["pair of ints"]),
    ((_t(2, 3, 8, 8, dtype="float32"), _t(4, 3, 3, 3)), {}, TypeError,
     ["float32", "float64", "astype"]),
    ((mg.tensor(np.zeros((2, 3, 8, 8), dtype=np.int64)), _t(4, 3, 3, 3)), {}, TypeError,
     ["floating point", "int64"]),
])
def test_conv2d_errors(args, kwargs, error, words):
    with pytest.raises(error) as info:
        F.conv2d(*args, **kwargs)
    for word in words:
        assert word in str(info.value), str(info.value)


@pytest.mark.parametrize("args, error, words", [
    ((_t(3, 8, 8), 2), ValueError, ["(N, C, H, W)", "(3, 8, 8)"]),
    ((_t(1, 1, 3, 3), 4), ValueError, ["4x4 window is larger", "3x3"]),
    ((_t(1, 1, 4, 4), 0), ValueError, ["kernel_size must be >= 1"]),
    ((_t(1, 1, 4, 4), 2, -1), ValueError, ["stride must be >= 1"]),
    ((_t(1, 1, 4, 4), "2"), TypeError, ["kernel_size must be an int"]),
])
def test_max_pool2d_errors(args, error, words):
    with pytest.raises(error) as info:
        F.max_pool2d(*args)
    for word in words:
        assert word in str(info.value), str(info.value)


# ---------------------------------------------------------------------------------------------
# Any array namespace: array-api-strict runs the same code (and never goes through NumPy)


def test_conv_and_pool_on_array_api_strict():
    rng = np.random.default_rng(10)
    x, w, b = (rng.standard_normal((2, 2, 7, 7)), rng.standard_normal((3, 2, 3, 3)),
               rng.standard_normal(3))
    g = rng.standard_normal((2, 3, 3, 3))
    with namespace("strict") as xp:
        X, W, B = (mg.Tensor(xp.asarray(a), requires_grad=True) for a in (x, w, b))
        y = F.max_pool2d(F.conv2d(X, W, B, stride=1, padding=1), 3, stride=2)
        assert isinstance(y.data, array_api_strict._array_object.Array)
        y.backward(xp.asarray(g))
        for t in (X, W, B):
            assert isinstance(t.grad, array_api_strict._array_object.Array)
            assert t.grad.shape == t.shape and t.grad.dtype == xp.float64
        strict = [host(xp, a) for a in (y.data, X.grad, W.grad, B.grad)]
    X, W, B = (mg.tensor(a, requires_grad=True) for a in (x, w, b))
    y = F.max_pool2d(F.conv2d(X, W, B, stride=1, padding=1), 3, stride=2)
    y.backward(g)
    for got, expected in zip(strict, (y.numpy(), X.grad, W.grad, B.grad)):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_float32_on_array_api_strict():
    rng = np.random.default_rng(11)
    with namespace("strict") as xp:
        x = mg.Tensor(xp.asarray(rng.standard_normal((1, 1, 6, 6)), dtype=xp.float32),
                      requires_grad=True)
        w = mg.Tensor(xp.asarray(rng.standard_normal((2, 1, 3, 3)), dtype=xp.float32),
                      requires_grad=True)
        y = F.max_pool2d(F.conv2d(x, w), 2)
        assert y.dtype == xp.float32
        y.sum().backward()
        assert x.grad.dtype == xp.float32 and w.grad.dtype == xp.float32


# ---------------------------------------------------------------------------------------------
# The backend pieces: col2im is the adjoint (transpose) of taking the sliding windows


@pytest.mark.parametrize("shape, kernel, stride", [
    ((2, 3, 7, 6), (3, 2), (1, 1)),   # overlapping windows: the loop of strided adds
    ((2, 3, 8, 9), (2, 3), (2, 3)),   # disjoint windows: NumPy's one strided add
    ((1, 2, 9, 9), (2, 2), (3, 3)),   # gaps between windows
])
@pytest.mark.parametrize("ns", NAMESPACES)
def test_add_windows_is_the_adjoint_of_sliding_windows(shape, kernel, stride, ns):
    rng = np.random.default_rng(12)
    x = rng.standard_normal(shape)
    kh, kw = kernel
    n, c, h, w = shape
    oh, ow = (h - kh) // stride[0] + 1, (w - kw) // stride[1] + 1
    v = rng.standard_normal((n, c, oh, ow, kh, kw))
    with namespace(ns) as xp:
        xa, va = (a if xp is np else xp.asarray(a) for a in (x, v))
        windows = backend.sliding_windows(xa, kh, kw, stride)
        assert windows.shape == (n, c, oh, ow, kh, kw)
        folded = backend.add_windows(xp.zeros(shape, dtype=xp.float64), va, stride)
        windows, folded = host(xp, windows), host(xp, folded)
    # <windows(x), v> == <x, add_windows(v)>: the definition of the adjoint
    np.testing.assert_allclose(np.sum(windows * v), np.sum(x * folded), rtol=1e-12)
    np.testing.assert_array_equal(windows[n - 1, c - 1, oh - 1, ow - 1],
                                  x[n - 1, c - 1, (oh - 1) * stride[0]:(oh - 1) * stride[0] + kh,
                                    (ow - 1) * stride[1]:(ow - 1) * stride[1] + kw])


def test_conv2d_output_is_a_valid_array_for_any_later_op():
    # The output is a view of a batch-last array; reshape, indexing and NumPy must not care.
    rng = np.random.default_rng(13)
    x = mg.tensor(rng.standard_normal((3, 2, 6, 6)), requires_grad=True)
    w = mg.tensor(rng.standard_normal((4, 2, 3, 3)), requires_grad=True)
    y = F.conv2d(x, w)
    expected = loop_conv2d(x.numpy(), w.numpy(), None, (1, 1), (0, 0))
    np.testing.assert_allclose(y.flatten(1).numpy(), expected.reshape(3, -1), atol=1e-12)
    np.testing.assert_allclose(y[1, 2].numpy(), expected[1, 2], atol=1e-12)
    (y.flatten(1)[:, 5] * 2.0).sum().backward()
    g = np.zeros(expected.shape)
    g.reshape(3, -1)[:, 5] = 2.0
    np.testing.assert_allclose(w.grad, loop_conv2d_backward(g, x.numpy(), w.numpy(), (1, 1),
                                                            (0, 0))[1], atol=1e-12)


# ---------------------------------------------------------------------------------------------
# nn.Conv2d and nn.MaxPool2d


def test_conv2d_layer_init_like_pytorch():
    layer = mg.nn.Conv2d(3, 8, (3, 2), seed=0)
    assert layer.weight.shape == (8, 3, 3, 2) and layer.bias.shape == (8,)
    bound = 1 / np.sqrt(3 * 3 * 2)  # 1/sqrt(fan_in): Kaiming-uniform with a = sqrt(5)
    for p in (layer.weight, layer.bias):
        assert p.requires_grad and p.dtype == np.float64
        assert np.all(np.abs(p.numpy()) < bound)
    assert np.abs(layer.weight.numpy()).max() > 0.8 * bound  # spread over the whole range
    # Weight first, then bias, from one Generator (as Linear draws them).
    rng = np.random.default_rng(0)
    np.testing.assert_array_equal(layer.weight.numpy(), rng.uniform(-bound, bound, (8, 3, 3, 2)))
    np.testing.assert_array_equal(layer.bias.numpy(), rng.uniform(-bound, bound, 8))
    same = mg.nn.Conv2d(3, 8, (3, 2), rng=np.random.default_rng(0))
    np.testing.assert_array_equal(same.weight.numpy(), layer.weight.numpy())
    assert [name for name, _ in layer.named_parameters()] == ["weight", "bias"]
    assert mg.nn.Conv2d(3, 8, 3, bias=False, seed=0).bias is None
    assert mg.nn.Conv2d(1, 2, 3, dtype="float32", seed=0).weight.dtype == np.float32


def test_conv2d_layer_repr_and_forward():
    assert repr(mg.nn.Conv2d(1, 6, 5, seed=0)) == "Conv2d(1, 6, kernel_size=(5, 5), stride=(1, 1))"
    assert (repr(mg.nn.Conv2d(3, 4, (3, 2), stride=2, padding=1, bias=False, seed=0))
            == "Conv2d(3, 4, kernel_size=(3, 2), stride=(2, 2), padding=(1, 1), bias=False)")
    assert repr(mg.nn.MaxPool2d(2)) == "MaxPool2d(kernel_size=2, stride=2)"
    assert repr(mg.nn.MaxPool2d(3, stride=1)) == "MaxPool2d(kernel_size=3, stride=1)"

    layer = mg.nn.Conv2d(2, 3, 3, stride=2, padding=1, seed=1)
    x = mg.tensor(np.random.default_rng(14).standard_normal((2, 2, 7, 7)))
    y = layer(x)
    np.testing.assert_allclose(y.numpy(), loop_conv2d(x.numpy(), layer.weight.numpy(),
                                                      layer.bias.numpy(), (2, 2), (1, 1)),
                               atol=1e-12)
    y.sum().backward()
    assert layer.weight.grad.shape == (3, 2, 3, 3) and layer.bias.grad.shape == (3,)
    pooled = mg.nn.MaxPool2d(2)(y)
    np.testing.assert_array_equal(pooled.numpy(), F.max_pool2d(y, 2).numpy())


def test_conv2d_layer_errors():
    with pytest.raises(ValueError, match="in_channels must be a positive int"):
        mg.nn.Conv2d(0, 3, 3)
    with pytest.raises(TypeError, match="kernel_size must be an int or a pair"):
        mg.nn.Conv2d(1, 3, "3")
    with pytest.raises(ValueError, match="rng or seed, not both"):
        mg.nn.Conv2d(1, 3, 3, rng=np.random.default_rng(0), seed=0)
    with pytest.raises(ValueError, match="1 channels .* expects 3"):
        mg.nn.Conv2d(3, 4, 3, seed=0)(mg.tensor(np.zeros((1, 1, 8, 8))))


def test_lenet_shapes_and_state_dict_round_trip(tmp_path):
    nn = mg.nn
    rng = np.random.default_rng(0)
    model = nn.Sequential(
        nn.Conv2d(1, 6, 5, rng=rng, dtype="float32"), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(6, 16, 5, rng=rng, dtype="float32"), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(400, 120, rng=rng, dtype="float32"), nn.ReLU(),
        nn.Linear(120, 84, rng=rng, dtype="float32"), nn.ReLU(),
        nn.Linear(84, 10, rng=rng, dtype="float32"))
    x = mg.tensor(rng.standard_normal((3, 1, 32, 32)), dtype="float32")
    logits = model(x)
    assert logits.shape == (3, 10) and logits.dtype == np.float32
    mg.save(model.state_dict(), tmp_path / "lenet.npz")
    copy = nn.Sequential(
        nn.Conv2d(1, 6, 5, seed=1, dtype="float32"), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(6, 16, 5, seed=1, dtype="float32"), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(400, 120, seed=1, dtype="float32"), nn.ReLU(),
        nn.Linear(120, 84, seed=1, dtype="float32"), nn.ReLU(),
        nn.Linear(84, 10, seed=1, dtype="float32"))
    copy.load_state_dict(mg.load(tmp_path / "lenet.npz"))
    np.testing.assert_array_equal(copy(x).numpy(), logits.numpy())


def _conv_pool_on(device, arrays, g, stride, padding):
    """Outputs and gradients of conv2d then max_pool2d on ``device``, as NumPy arrays."""
    x, w, b = (mg.tensor(a, requires_grad=True, device=device) for a in arrays)
    y = F.max_pool2d(F.conv2d(x, w, b, stride=stride, padding=padding), 2, stride=1)
    y.backward(mg.tensor(g, device=device))
    assert y.device == x.device == ("cpu" if device == "cpu" else "cuda:0")
    return [backend.to_numpy(a) for a in (y.data, x.grad, w.grad, b.grad)]


@pytest.mark.skipif(not backend.cupy_available(),
                    reason="CuPy is not installed or sees no CUDA device")
@pytest.mark.parametrize("stride, padding", [(1, 0), (2, 1)])
def test_conv_and_pool_on_the_gpu_match_numpy(stride, padding):
    rng = np.random.default_rng(15)
    arrays = (rng.standard_normal((2, 3, 9, 9)), rng.standard_normal((4, 3, 3, 3)),
              rng.standard_normal(4))
    oh = (9 + 2 * padding - 3) // stride + 1
    g = rng.standard_normal((2, 4, oh - 1, oh - 1))
    on_cpu = _conv_pool_on("cpu", arrays, g, stride, padding)
    on_gpu = _conv_pool_on("cuda", arrays, g, stride, padding)
    for a, b in zip(on_cpu, on_gpu):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_conv_module_imports_no_numpy():
    # Engine modules reach NumPy only through minigrad.backend (see the team rules).
    import ast
    import inspect

    import minigrad.conv

    tree = ast.parse(inspect.getsource(minigrad.conv))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree)
                if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module}
    assert not imported & {"numpy", "cupy"}, imported
