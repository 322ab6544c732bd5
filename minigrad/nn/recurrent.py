"""Recurrent layers: :class:`RNN`, :class:`LSTM`, :class:`GRU` and their one-step cells.

A recurrent layer reads a sequence one step at a time and carries a *hidden state* ``h`` from
each step to the next. The input's share of every step, ``x W_ih^T + b_ih`` (and ``+ b_hh``
for RNN and LSTM), does not depend on ``h``: a layer computes it for the whole sequence first,
in one matrix product of ``(T * N, I)`` by ``(I, gates * H)``, as PyTorch's CPU layers do;
its backward is then one product too. Each step is then ``xw_t + h W_hh^T`` (for RNN and LSTM
one operation, :func:`recurrence`, whose backward leaves ``W_hh``'s gradient to one product
over all steps) and a handful of ordinary engine operations (sigmoids, tanhs, products), so
the forward pass over ``T`` steps records ``T`` copies of the step in the graph, one after
another. ``backward()`` then walks
that chain from the last step to the first: this *is* backpropagation through time (BPTT); no
extra code is needed for it. The engine's ``backward`` uses a heap, not recursion, so a chain
of thousands of steps is fine, and the graph is freed by reference counting once the last
tensor of it is dropped.

To train on long texts, cut the sequence into chunks and pass the state from one chunk to the
next with ``h.detach()``: the next chunk starts a new graph (*truncated* BPTT).

Names, shapes, gate order and formulas are PyTorch's, so a PyTorch state dict loads unchanged
(``model.load_state_dict({k: v.numpy() for k, v in torch_model.state_dict().items()})``):

============  =====================  ===================================================
layer         gates (rows of W)      one step
============  =====================  ===================================================
RNN           one                    ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)``
LSTM          i, f, g, o             ``c' = f * c + i * g``, ``h' = o * tanh(c')``
GRU           r, z, n                ``n = tanh(x W_in^T + b_in + r * (h W_hn^T + b_hn))``,
                                     ``h' = (1 - z) * n + z * h``
============  =====================  ===================================================

What the graph holds per step and per layer (measured with :mod:`minigrad.graph` and asserted
in ``tests/nn/test_rnn.py``; ``N`` samples, input size ``I``, hidden size ``H``):

=====  ==========  ===========================================================================
layer  operations  arrays saved for backward, values per sample
=====  ==========  ===========================================================================
RNN    2           ``I + H``: the input ``x_t`` (saved once for the whole sequence by the
                   input's product) and the state ``h``; tanh's output is the next step's
                   ``h``, stored once
LSTM   14          ``I + 7H``: ``x_t``, ``h``, ``c``, the three sigmoid gates, ``tanh(g)`` and
                   ``tanh(c')``
GRU    19          ``I + 6H``: ``x_t``, ``h``, the gates ``r``, ``z``, ``n``, ``h W_hn^T + b_hn``
                   and ``h - n``
=====  ==========  ===========================================================================

So an LSTM with ``H = 128`` over 100 steps of a batch of 32 in float32 keeps about
``100 * 32 * (I + 896) * 4`` bytes, 11.9 MB for ``I = 32``, until ``backward()`` frees it.
The weights and their transposes are saved once for the whole sequence, not once per step.
The operations per step: RNN: ``xw_t + h W_hh^T`` (:func:`recurrence`) and the tanh; LSTM:
the same one, 4 gate slices, 3 sigmoids, 2 tanhs, 3 products and 1 sum; GRU: the step's slice
of the input's share (:func:`steps_of`), ``h W_hh^T + b_hh``, 6 gate slices and the rest.
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

from ..backend import row_major
from ..random_ops import dropout as _dropout
from ..reshaping import cat, stack
from ..tensor import Tensor
from ..tensor import op
from .modules import Module, _generator, _uniform_parameter

__all__ = ["GRU", "LSTM", "RNN", "GRUCell", "LSTMCell", "RNNCell"]


# ---------------------------------------------------------------------------------------------
# One step of each kind, on tensors. ``w_ih_t`` and ``w_hh_t`` are the *transposed* weights,
# (in, gates * H) and (H, gates * H): a layer transposes them once per sequence, not per step.


def input_share(x: Tensor, w_ih_t: Tensor, b_ih: Tensor | None, b_hh: Tensor | None = None
                ) -> Tensor:
    """The input's share of the gates, ``x W_ih^T + b_ih (+ b_hh)``, for every row of ``x``.

    A layer calls it once for the whole sequence, ``x`` (T * N, in): one matrix product instead
    of one per step (PyTorch's CPU LSTM does the same), and so one product for the weight's
    gradient too. ``b_hh`` is given where it is simply added (RNN, LSTM; not the GRU, whose
    ``b_hn`` is multiplied by ``r``): both biases are then added once, as their sum.
    """
    y = x @ w_ih_t
    if b_ih is None:
        return y
    return y + (b_ih + b_hh if b_hh is not None else b_ih)


def steps_of(x: Tensor, axis: int = 0) -> list[Tensor]:
    """``x``'s slices along ``axis``, one tensor each, whose gradients land in one array.

    ``[x[t] for t in ...]`` would do, but each slice's backward makes an array of zeros of
    ``x``'s whole shape, and the engine adds them up: ``T`` arrays of ``(T, N, 4H)`` for a
    sequence of ``T`` steps. Here one node stands between ``x`` and the slices (``unbind``, a
    tensor with no values: an operation has one output); each slice's VJP writes its gradient
    into one array of ``x``'s shape, made by the first of them, and hands ``unbind`` an empty
    array. ``unbind`` is older than every slice, so the engine reaches it after all of them;
    its VJP hands that array to ``x``, with zeros for the steps no gradient reached.
    """
    xp, n, dtype, shape = x._xp, x.shape[axis], x.dtype, x.shape
    index = (slice(None),) * axis
    grad: list[Any] = []    # the gradient of x, during one backward pass
    written: set[int] = set()  # the steps whose gradient it holds
    nothing = xp.zeros((0,), dtype=dtype)

    def gather(_: Any) -> Any:
        g = grad.pop()
        for t in set(range(n)) - written:  # no gradient reached these steps
            g[index + (t, ...)] = 0
        written.clear()
        return g

    def keep(t: int) -> Callable[[Any], Any]:
        def vjp(g: Any) -> Any:
            if not grad:
                grad.append(xp.empty(shape, dtype=dtype))
            grad[0][index + (t, ...)] = g
            written.add(t)
            return nothing
        return vjp

    hub = op(nothing, (x,), gather, name="unbind")
    return [op(x.data[index + (t, ...)], (hub,), keep(t), name="step") for t in range(n)]


def recurrence(xw: Tensor, w_hh_t: Tensor, axis: int = 0) -> Callable[[int, Tensor], Tensor]:
    """Step ``t``'s pre-activation ``xw[t] + h W_hh^T`` as one operation, for RNN and LSTM.

    ``xw`` is the input's share of every step, (T, N, gates * H) (``axis`` 1: (N, T, ...)).
    Returns ``pre(t, h)``. The gradient of step ``t``'s result, ``g``, is the gradient of
    ``xw[t]`` as it is, and gives ``h`` its gradient ``g W_hh``; ``W_hh^T``'s gradient is
    ``sum_t h_t^T g_t``, which the step's VJP leaves for later: it writes ``g`` and ``h`` into
    two arrays of the whole sequence, and one node older than every step (``recurrence``,
    a tensor with no values; an operation has one output) makes the gradients of ``xw`` and of
    ``W_hh^T`` from them once the engine has walked all steps: the second is one matrix
    product over all ``T * N`` rows instead of ``T`` products and ``T - 1`` sums (PyTorch's
    CPU LSTM sums ``T`` products). A step no gradient reached adds zeros.
    """
    xp, dtype, w, shape = xw._xp, xw.dtype, w_hh_t.data, xw.shape
    w_rows = row_major(w)  # the steps' right operand, row by row: faster products (backend)
    n, index, w_needs_grad = shape[axis], (slice(None),) * axis, w_hh_t.requires_grad
    sums: list[Any] = []    # during one backward pass: the g of every step, and its h
    written: set[int] = set()  # the steps whose g and h they hold
    nothing = xp.zeros((0,), dtype=dtype)
    collect = xw.requires_grad or w_needs_grad  # else only h needs a gradient

    def gather(_: Any) -> tuple[Any, Any]:
        g, h = sums
        sums.clear()
        for t in set(range(n)) - written:  # no gradient reached these steps
            g[index + (t, ...)] = 0
            h[index + (t, ...)] = 0
        written.clear()
        if not w_needs_grad:
            return g, None
        rows = xp.reshape(h, (-1, h.shape[-1]))  # (T * N, H)
        return g, xp.matrix_transpose(rows) @ xp.reshape(g, (-1, g.shape[-1]))

    def keep(t: int) -> Callable[..., Any]:
        def vjp(g: Any, h: Any) -> tuple[Any, Any]:
            if not collect:
                return None, g @ xp.matrix_transpose(w)
            if not sums:
                sums.extend([xp.empty(shape, dtype=dtype),
                             xp.empty(shape[:-1] + (h.shape[-1],), dtype=h.dtype)])
            sums[0][index + (t, ...)] = g
            sums[1][index + (t, ...)] = h
            written.add(t)
            return nothing, g @ xp.matrix_transpose(w)
        return vjp

    hub = op(nothing, (xw, w_hh_t), gather, name="recurrence")

    def pre(t: int, h: Tensor) -> Tensor:
        return op(xw.data[index + (t, ...)] + h.data @ w_rows, (hub, h), keep(t), saved=(h.data,),
                  name="step")
    return pre


def rnn_step(pre: Tensor, nonlinearity: str = "tanh") -> Tensor:
    """One step of an Elman RNN from its pre-activation ``x W_ih^T + b_ih + h W_hh^T + b_hh``:
    ``tanh(pre)`` or ``relu(pre)``."""
    return pre.tanh() if nonlinearity == "tanh" else pre.relu()


def lstm_step(gates: Tensor, c: Tensor) -> tuple[Tensor, Tensor]:
    """One LSTM step from its gates' pre-activations ``x W_ih^T + b_ih + h W_hh^T + b_hh``,
    (N, 4H); returns ``(h', c')``.

    The four gates come from one product, ``(N, 4H)``, and are cut into quarters in
    PyTorch's order: input ``i``, forget ``f``, cell candidate ``g``, output ``o``.
    """
    n_hidden = c.shape[-1]
    i, f, g, o = (gates[..., k * n_hidden:(k + 1) * n_hidden] for k in range(4))
    c_next = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h_next = o.sigmoid() * c_next.tanh()
    return h_next, c_next


def gru_step(gi: Tensor, h: Tensor, w_hh_t: Tensor, b_hh: Tensor | None) -> Tensor:
    """One GRU step (PyTorch's formulation: the reset gate multiplies ``h W_hn^T + b_hn``),
    from the input's share ``gi = x W_ih^T + b_ih`` (N, 3H).

    Gates in PyTorch's order: reset ``r``, update ``z``, new ``n``.
    """
    n_hidden = h.shape[-1]
    gh = h @ w_hh_t  # (N, 3H): the state's share
    gh = gh + b_hh if b_hh is not None else gh
    cut = [slice(k * n_hidden, (k + 1) * n_hidden) for k in range(3)]
    r = (gi[..., cut[0]] + gh[..., cut[0]]).sigmoid()
    z = (gi[..., cut[1]] + gh[..., cut[1]]).sigmoid()
    n = (gi[..., cut[2]] + r * gh[..., cut[2]]).tanh()
    return n + z * (h - n)  # = (1 - z) * n + z * h, one operation fewer


# ---------------------------------------------------------------------------------------------
# Shared set-up


_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _check_sizes(layer: str, **sizes: int) -> None:
    for label, n in sizes.items():
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise ValueError(f"{layer}: {label} must be a positive int; got {n!r}")


def _as_tensor(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


def _check_dtype(layer: str, what: str, t: Tensor, weight: Tensor) -> None:
    if t.dtype != weight.dtype:
        raise TypeError(f"{layer}: {what} has dtype {t.dtype} but the layer's parameters are "
                        f"{weight.dtype}; build the layer with dtype={str(t.dtype)!r} or "
                        f"convert the {what} with .astype({str(weight.dtype)!r})")


def _pair_state(state: Any, layer: str, names: str) -> tuple[Any, Any]:
    """An LSTM's state: ``None`` (zeros) or a pair (a tuple or list of two) of states."""
    if state is None:
        return None, None
    if not isinstance(state, (tuple, list)) or len(state) != 2:
        got = f"a {type(state).__name__} of {len(state)}" if isinstance(state, (tuple, list)) \
            else f"a {type(state).__name__}"
        raise TypeError(f"{layer}: the state must be a pair {names} or None; got {got}")
    return state[0], state[1]


def _zeros(like: Tensor, shape: tuple[int, ...]) -> Tensor:
    """A zero state of ``shape`` in ``like``'s namespace, device and dtype (a constant)."""
    return Tensor(like._xp.zeros(shape, dtype=like.dtype))


# ---------------------------------------------------------------------------------------------
# The cells: one step, as a module


class _CellBase(Module):
    _mode = ""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, rng: Any,
                 seed: int | None, dtype: Any, device: str | None) -> None:
        super().__init__()
        layer = type(self).__name__
        _check_sizes(layer, input_size=input_size, hidden_size=hidden_size)
        rng = _generator(layer, rng, seed)
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        rows = _GATES[self._mode] * hidden_size
        bound = 1.0 / math.sqrt(hidden_size)  # PyTorch: every parameter ~ U(-1/sqrt(H), 1/sqrt(H))
        self.weight_ih = _uniform_parameter(rng, bound, (rows, input_size), dtype, device)
        self.weight_hh = _uniform_parameter(rng, bound, (rows, hidden_size), dtype, device)
        self.bias_ih = _uniform_parameter(rng, bound, (rows,), dtype, device) if bias else None
        self.bias_hh = _uniform_parameter(rng, bound, (rows,), dtype, device) if bias else None

    def _input(self, x: Any) -> tuple[Tensor, bool]:
        """The input as a tensor (N, input_size) and whether it came without a batch axis."""
        layer = type(self).__name__
        x = _as_tensor(x)
        if x.ndim not in (1, 2) or x.shape[-1] != self.input_size:
            raise ValueError(f"{layer}: expected input of shape (N, {self.input_size}) or "
                             f"({self.input_size},); got {x.shape}")
        _check_dtype(layer, "input", x, self.weight_ih)
        return (x.reshape(1, -1), True) if x.ndim == 1 else (x, False)

    def _state(self, h: Any, x: Tensor, unbatched: bool, what: str = "hx") -> Tensor:
        layer = type(self).__name__
        expected = (x.shape[0], self.hidden_size)
        if h is None:
            return _zeros(x, expected)
        h = _as_tensor(h)
        if unbatched and h.ndim == 1:
            h = h.reshape(1, -1)
        if h.shape != expected:
            raise ValueError(f"{layer}: expected {what} of shape {expected} for an input of "
                             f"shape {x.shape}; got {h.shape}")
        _check_dtype(layer, what, h, self.weight_ih)
        return h

    def _weights(self) -> tuple[Tensor, Tensor, Tensor | None, Tensor | None]:
        return self.weight_ih.T, self.weight_hh.T, self.bias_ih, self.bias_hh

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if not self.bias:
            s += ", bias=False"
        return s


class RNNCell(_CellBase):
    """One step of an Elman RNN: ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)``.

    Parameters
    ----------
    input_size, hidden_size : int
        Features of each input and of the hidden state.
    bias : bool
        Whether to learn ``bias_ih`` and ``bias_hh``.
    nonlinearity : str
        ``"tanh"`` (default) or ``"relu"``.
    rng, seed : numpy Generator or int, optional
        Draw the initial values, in the order ``weight_ih`` (H, in), ``weight_hh`` (H, H),
        ``bias_ih`` (H,), ``bias_hh`` (H,), each uniform in ``(-1/sqrt(H), 1/sqrt(H))``
        (PyTorch's default).
    dtype : str
        ``"float64"`` (default) or ``"float32"``.
    device : str, optional
        ``"cpu"`` (NumPy) or ``"cuda"`` (CuPy).

    Notes
    -----
    Call it as ``cell(x, h=None)`` with ``x`` (N, input_size) or (input_size,); a missing
    ``h`` is zeros. Returns ``h'`` (N, hidden_size).
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", *, rng: Any = None, seed: int | None = None,
                 dtype: Any = "float64", device: str | None = None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNNCell: nonlinearity must be 'tanh' or 'relu'; got "
                             f"{nonlinearity!r}")
        self._mode = "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU"
        self.nonlinearity = nonlinearity
        super().__init__(input_size, hidden_size, bias, rng, seed, dtype, device)

    def forward(self, x: Any, h: Any = None) -> Tensor:
        x, unbatched = self._input(x)
        h = self._state(h, x, unbatched)
        w_ih_t, w_hh_t, b_ih, b_hh = self._weights()
        h_next = rnn_step(input_share(x, w_ih_t, b_ih, b_hh) + h @ w_hh_t, self.nonlinearity)
        return h_next.reshape(-1) if unbatched else h_next

    def extra_repr(self) -> str:
        s = super().extra_repr()
        return s + ", nonlinearity='relu'" if self.nonlinearity == "relu" else s


class LSTMCell(_CellBase):
    """One LSTM step; ``cell(x, (h, c))`` returns ``(h', c')``.

    Parameters are as :class:`RNNCell`'s, with ``4 * hidden_size`` rows: the gates input,
    forget, cell and output, in that order (PyTorch's). A missing state is zeros.
    """

    _mode = "LSTM"

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, *,
                 rng: Any = None, seed: int | None = None, dtype: Any = "float64",
                 device: str | None = None) -> None:
        super().__init__(input_size, hidden_size, bias, rng, seed, dtype, device)

    def forward(self, x: Any, state: tuple[Any, Any] | None = None) -> tuple[Tensor, Tensor]:
        x, unbatched = self._input(x)
        h, c = _pair_state(state, "LSTMCell", "(h, c)")
        h, c = self._state(h, x, unbatched, "h"), self._state(c, x, unbatched, "c")
        w_ih_t, w_hh_t, b_ih, b_hh = self._weights()
        h_next, c_next = lstm_step(input_share(x, w_ih_t, b_ih, b_hh) + h @ w_hh_t, c)
        if unbatched:
            return h_next.reshape(-1), c_next.reshape(-1)
        return h_next, c_next


class GRUCell(_CellBase):
    """One GRU step; ``cell(x, h=None)`` returns ``h'``.

    Parameters are as :class:`RNNCell`'s, with ``3 * hidden_size`` rows: the gates reset,
    update and new, in that order (PyTorch's).
    """

    _mode = "GRU"

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, *,
                 rng: Any = None, seed: int | None = None, dtype: Any = "float64",
                 device: str | None = None) -> None:
        super().__init__(input_size, hidden_size, bias, rng, seed, dtype, device)

    def forward(self, x: Any, h: Any = None) -> Tensor:
        x, unbatched = self._input(x)
        h = self._state(h, x, unbatched)
        w_ih_t, w_hh_t, b_ih, b_hh = self._weights()
        h_next = gru_step(input_share(x, w_ih_t, b_ih), h, w_hh_t, b_hh)
        return h_next.reshape(-1) if unbatched else h_next


# ---------------------------------------------------------------------------------------------
# The layers: a whole sequence, one or more layers stacked


class _RNNBase(Module):
    _mode = ""
    dropout: float = 0.0  # class defaults, as Module.training
    bidirectional: bool = False

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, *, rng: Any = None,
                 seed: int | None = None, dtype: Any = "float64",
                 device: str | None = None) -> None:
        # LSTM's and GRU's signature (they inherit it); RNN's adds nonlinearity.
        super().__init__()
        layer = type(self).__name__
        _check_sizes(layer, input_size=input_size, hidden_size=hidden_size,
                     num_layers=num_layers)
        if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or \
                not 0 <= dropout <= 1:
            raise ValueError(f"{layer}: dropout should be a number in range [0, 1] "
                             f"representing the probability of an element being zeroed; got "
                             f"{dropout!r}")
        if dropout > 0 and num_layers == 1:
            warnings.warn(f"{layer}: dropout option adds dropout after all but last recurrent "
                          f"layer, so non-zero dropout expects num_layers greater than 1, but "
                          f"got dropout={dropout} and num_layers={num_layers}", UserWarning,
                          stacklevel=2)
        rng = _generator(layer, rng, seed)
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first = bias, batch_first
        self.dropout, self.bidirectional = float(dropout), bool(bidirectional)
        directions = 2 if bidirectional else 1
        rows = _GATES[self._mode] * hidden_size
        bound = 1.0 / math.sqrt(hidden_size)
        # Set in PyTorch's order, so named_parameters() and state_dict() list them as it does:
        # layer by layer, the forward direction, then the reverse one ("_reverse").
        for k in range(num_layers):
            n_in = input_size if k == 0 else hidden_size * directions
            for sfx in ("", "_reverse")[:directions]:
                setattr(self, f"weight_ih_l{k}{sfx}",
                        _uniform_parameter(rng, bound, (rows, n_in), dtype, device))
                setattr(self, f"weight_hh_l{k}{sfx}",
                        _uniform_parameter(rng, bound, (rows, hidden_size), dtype, device))
                if bias:
                    setattr(self, f"bias_ih_l{k}{sfx}",
                            _uniform_parameter(rng, bound, (rows,), dtype, device))
                    setattr(self, f"bias_hh_l{k}{sfx}",
                            _uniform_parameter(rng, bound, (rows,), dtype, device))
        # the dropout masks between layers (training only) are drawn from the same generator,
        # after the initial values
        self._dropout_rng = rng

    @property
    def _directions(self) -> int:
        return 2 if self.bidirectional else 1

    def _weight(self, kind: str, k: int, sfx: str = "") -> Tensor:
        """``weight_ih_l{k}`` (kind "ih") or ``weight_hh_l{k}`` (kind "hh"); ``sfx``
        ``"_reverse"`` for the reverse direction."""
        return getattr(self, f"weight_{kind}_l{k}{sfx}")

    def _layer_weights(self, k: int, sfx: str = ""
                       ) -> tuple[Tensor, Tensor, Tensor | None, Tensor | None]:
        """Layer ``k``'s weights, transposed once for the whole sequence, and biases."""
        b_ih = getattr(self, f"bias_ih_l{k}{sfx}") if self.bias else None
        b_hh = getattr(self, f"bias_hh_l{k}{sfx}") if self.bias else None
        return self._weight("ih", k, sfx).T, self._weight("hh", k, sfx).T, b_ih, b_hh

    def _input(self, x: Any) -> tuple[Tensor, int, bool]:
        """The input as (L, N, input_size) or (N, L, input_size), the axis of its steps, and
        whether it had no batch axis."""
        layer = type(self).__name__
        x = _as_tensor(x)
        order = "(N, L, input_size)" if self.batch_first else "(L, N, input_size)"
        if x.ndim not in (2, 3) or x.shape[-1] != self.input_size:
            raise ValueError(f"{layer}: expected input of shape {order} or (L, "
                             f"{self.input_size}) without a batch; got {x.shape}")
        _check_dtype(layer, "input", x, self._weight("ih", 0))
        steps = x.shape[1] if self.batch_first and x.ndim == 3 else x.shape[0]
        if steps == 0:
            raise ValueError(f"{layer}: expected a sequence of at least one step; got input of "
                             f"shape {x.shape} (sequence length 0), as PyTorch refuses too")
        if x.ndim == 2:  # one sequence without a batch axis: a batch of one
            return x.reshape(x.shape[0], 1, x.shape[1]), 0, True
        return x, (1 if self.batch_first else 0), False

    def _state(self, h: Any, batch: int, unbatched: bool, like: Tensor,
               what: str) -> list[Tensor]:
        """The initial state as one (N, H) tensor per layer (zeros when not given)."""
        layer = type(self).__name__
        n = self.num_layers * self._directions
        expected = (n, batch, self.hidden_size)
        if h is None:
            return [_zeros(like, expected[1:]) for _ in range(n)]
        h = _as_tensor(h)
        if unbatched and h.ndim == 2:
            h = h.reshape(n, 1, self.hidden_size)
        if h.shape != expected:
            shown = (n, self.hidden_size) if unbatched else expected
            d = " * 2 (bidirectional)" if self._directions == 2 else ""
            raise ValueError(f"{layer}: expected {what} of shape {shown} (num_layers{d}, "
                             f"{'' if unbatched else 'N, '}hidden_size); got {h.shape}")
        _check_dtype(layer, what, h, self._weight("ih", 0))
        return [h[k] for k in range(n)]

    def _output(self, steps: list[Tensor], unbatched: bool) -> Tensor:
        axis = 1 if self.batch_first and not unbatched else 0
        out = stack(steps, axis=axis)  # (L, N, H) or (N, L, H)
        return out.reshape(out.shape[0], -1) if unbatched else out

    def _final(self, states: list[Tensor], unbatched: bool) -> Tensor:
        h = stack(states, axis=0)  # (num_layers * directions, N, H)
        return h.reshape(len(states), -1) if unbatched else h

    def _run(self, x: Any, initial: list[Any], step: Callable[..., tuple[Tensor, ...]]
             ) -> tuple[Tensor, list[Tensor]]:
        """Run every layer over the whole sequence; return the output and the final states.

        ``initial`` holds one initial-state tensor (num_layers, N, H) or None per carried
        state (one for RNN and GRU: h; two for LSTM: h and c). ``step(pre, t, states, w_hh_t,
        b_hh)`` makes step ``t`` from ``pre(t, h)`` (see :meth:`_pre_activations`) and returns
        the new states, a tuple whose first is ``h``. The input's share of every step is
        computed before the loop, in one matrix product per layer and direction
        (:func:`input_share`).
        """
        seq, axis, unbatched = self._input(x)  # (L, N, in) or (N, L, in)
        carried = [self._state(s, seq.shape[1 - axis], unbatched, seq, name)
                   for s, name in zip(initial, ("h_0", "c_0"))]
        finals: list[list[Tensor]] = [[] for _ in initial]
        directions, fold = self._directions, self._mode != "GRU"  # GRU: b_hh stays per step
        for k in range(self.num_layers):
            per_direction = []
            for d, sfx in enumerate(("", "_reverse")[:directions]):
                w_ih_t, w_hh_t, b_ih, b_hh = self._layer_weights(k, sfx)
                xw = input_share(seq.reshape(-1, seq.shape[-1]), w_ih_t, b_ih,
                                 b_hh if fold else None)
                xw = xw.reshape(seq.shape[0], seq.shape[1], -1)  # (L, N, gates * H)
                pre = self._pre_activations(xw, w_hh_t, axis)  # pre(t, h) for step t
                states = tuple(s[k * directions + d] for s in carried)
                outputs = []
                n = seq.shape[axis]
                # the reverse direction reads the sequence from its end
                for t in (range(n) if d == 0 else range(n - 1, -1, -1)):
                    # BPTT walks this loop backwards
                    states = step(pre, t, states, w_hh_t, b_hh)
                    outputs.append(states[0])
                per_direction.append(outputs if d == 0 else outputs[::-1])
                for final, s in zip(finals, states):
                    final.append(s)
            # the next layer reads this layer's hidden states (both directions side by side)
            inputs = per_direction[0] if directions == 1 else \
                [cat([f, b], axis=-1) for f, b in zip(*per_direction)]
            if self.training and self.dropout and k < self.num_layers - 1:
                inputs = [_dropout(x_t, self.dropout, generator=self._dropout_rng)
                          for x_t in inputs]
            if k < self.num_layers - 1:
                seq, axis = stack(inputs, axis=0), 0  # (L, N, H or 2H)
        return self._output(inputs, unbatched), [self._final(f, unbatched) for f in finals]

    def _pre_activations(self, xw: Tensor, w_hh_t: Tensor, axis: int
                         ) -> Callable[[int, Tensor], Tensor]:
        """``pre(t, h)``: RNN and LSTM: step ``t``'s ``xw[t] + h W_hh^T`` (one operation,
        :func:`recurrence`); GRU: ``xw[t]`` alone (``h``'s share is in :func:`gru_step`)."""
        if self._mode != "GRU":
            return recurrence(xw, w_hh_t, axis)
        shares = steps_of(xw, axis)
        return lambda t, h: shares[t]

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if not self.bias:
            s += ", bias=False"
        if self.batch_first:
            s += ", batch_first=True"
        if self.dropout:
            s += f", dropout={self.dropout}"
        if self._directions == 2:
            s += ", bidirectional=True"
        return s


_LAYER_PARAMETERS = """Parameters
    ----------
    input_size, hidden_size : int
        Features of each input step and of the hidden state ``H``.
    num_layers : int
        Layers stacked: layer ``k + 1`` reads the hidden states of layer ``k``.
    bias : bool
        Whether to learn the biases ``bias_ih_l{k}`` and ``bias_hh_l{k}``.
    batch_first : bool
        Input and output as (N, L, features) instead of (L, N, features). The states
        ``h_0``, ``h_n`` are (num_layers, N, H) either way, as in PyTorch.
    dropout : float
        In training, dropout with this probability on the outputs of every layer but the
        last (the masks drawn from ``rng`` or ``seed``'s generator, after the weights).
    bidirectional : bool
        Each layer also runs from the sequence's end (parameters ``..._reverse``); outputs
        are (L, N, 2H), forward then reverse, and the states (2 * num_layers, N, H).
    rng, seed : numpy Generator or int, optional
        Draw the initial values in the order of ``named_parameters()``, each uniform in
        ``(-1/sqrt(H), 1/sqrt(H))`` (PyTorch's default).
    dtype : str
        ``"float64"`` (default) or ``"float32"``.
    device : str, optional
        ``"cpu"`` (NumPy) or ``"cuda"`` (CuPy).

    A sequence without a batch axis, (L, input_size), is accepted too, with states
    (num_layers, H).
"""


class RNN(_RNNBase):
    """A (stack of) Elman RNN layer(s) over a whole sequence.

    ``rnn(x, h_0=None)`` returns ``(output, h_n)``: the last layer's hidden state at every
    step, (L, N, H), and every layer's state after the last step, (num_layers, N, H).
    Parameters per layer ``k``: ``weight_ih_l{k}`` (H, in), ``weight_hh_l{k}`` (H, H),
    ``bias_ih_l{k}`` (H,), ``bias_hh_l{k}`` (H,).

    {parameters}
    nonlinearity : str
        ``"tanh"`` (default) or ``"relu"``.

    Example
    -------
    >>> import numpy as np
    >>> rnn = RNN(3, 5, num_layers=2, seed=0)
    >>> output, h_n = rnn(np.zeros((7, 2, 3)))  # (L, N, input_size)
    >>> output.shape, h_n.shape
    ((7, 2, 5), (2, 2, 5))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 nonlinearity: str = "tanh", bias: bool = True, batch_first: bool = False,
                 dropout: float = 0.0, bidirectional: bool = False, *,
                 rng: Any = None, seed: int | None = None, dtype: Any = "float64",
                 device: str | None = None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNN: nonlinearity must be 'tanh' or 'relu'; got {nonlinearity!r}")
        self._mode = "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU"
        self.nonlinearity = nonlinearity
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, rng=rng, seed=seed, dtype=dtype, device=device)

    def forward(self, x: Any, h_0: Any = None) -> tuple[Tensor, Tensor]:
        act = self.nonlinearity

        def step(pre: Callable[[int, Tensor], Tensor], t: int, s: tuple[Tensor], *_: Any
                 ) -> tuple[Tensor]:
            return (rnn_step(pre(t, s[0]), act),)

        output, (h_n,) = self._run(x, [h_0], step)
        return output, h_n

    def extra_repr(self) -> str:
        s = super().extra_repr()
        return s + ", nonlinearity='relu'" if self.nonlinearity == "relu" else s


class LSTM(_RNNBase):
    """A (stack of) LSTM layer(s) over a whole sequence.

    ``lstm(x, (h_0, c_0))`` (the state may be left out: zeros) returns
    ``(output, (h_n, c_n))``: the last layer's ``h`` at every step, (L, N, H), and every
    layer's ``h`` and ``c`` after the last step, each (num_layers, N, H). Parameters per layer
    ``k`` have ``4H`` rows, the gates input, forget, cell, output in PyTorch's order:
    ``weight_ih_l{k}`` (4H, in), ``weight_hh_l{k}`` (4H, H), ``bias_ih_l{k}``,
    ``bias_hh_l{k}`` (4H,).

    {parameters}
    """

    _mode = "LSTM"

    def forward(self, x: Any, state: tuple[Any, Any] | None = None
                ) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        h_0, c_0 = _pair_state(state, "LSTM", "(h_0, c_0)")
        output, (h_n, c_n) = self._run(x, [h_0, c_0],
                                       lambda pre, t, s, *_: lstm_step(pre(t, s[0]), s[1]))
        return output, (h_n, c_n)


class GRU(_RNNBase):
    """A (stack of) GRU layer(s) over a whole sequence.

    ``gru(x, h_0=None)`` returns ``(output, h_n)`` shaped as :class:`RNN`'s. Parameters per
    layer ``k`` have ``3H`` rows, the gates reset, update, new in PyTorch's order.

    {parameters}
    """

    _mode = "GRU"

    def forward(self, x: Any, h_0: Any = None) -> tuple[Tensor, Tensor]:
        output, (h_n,) = self._run(
            x, [h_0], lambda pre, t, s, w, b: (gru_step(pre(t, s[0]), s[0], w, b),))
        return output, h_n


for _layer in (RNN, LSTM, GRU):  # the parameters they share, written once
    _layer.__doc__ = (_layer.__doc__ or "").replace("{parameters}", _LAYER_PARAMETERS.strip())
