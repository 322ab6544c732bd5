"""The tensor autodiff engine: the core.

A :class:`Tensor` wraps an array (``.data``) and, once ``backward()`` has run, holds its gradient
(``.grad``, same shape). A tensor made by an operation also remembers its *parents* and one
*vector-Jacobian product* (VJP): a function that maps the gradient of the output to the
gradients of the parents. Every operation is built by :func:`op` from three things: the
forward result, computed right away on arrays; the parents (the input tensors); and the VJP,
a formula in the output gradient ``g`` and the arrays saved for it (``saved=``).

The VJP never refers to the output tensor itself, only to arrays. So an output does not keep
itself alive through its own closure, the graph has no reference cycles, and it is freed the
moment the last tensor of it goes away. Array math goes through the array's own namespace
(``self._xp``), so the same code runs on NumPy, CuPy and array-api-strict.

Here is what the course builds: ``op``, ``backward``, ``no_grad``, the arithmetic, ``exp``,
``log``, ``tanh``, ``relu``, ``matmul``, ``sum``, ``reshape``, ``transpose``, indexing. The
other operations live in modules by family, written the same way, and become methods when
``minigrad`` is imported (elementwise, comparisons, reductions, reshaping, selection,
shape_ops, creation). The fast path of gradients written into a fused optimizer's buffers
(:mod:`minigrad.grad_buffers`) has one hook here, in :func:`_accumulate_grad`.

**The order of backward().** Lesson 1 runs the VJPs in ``reversed(topological_order(root))``,
from a depth-first walk. ``backward()`` runs them newest first: each tensor an operation makes
is numbered when it is made, after its inputs, so when the newest waiting tensor comes up,
every use of it has sent its gradient back; newest first is a topological order too. A heap
of the numbers hands it out: no walk of the graph before the pass, and only the tensors a
gradient reaches are visited. Both orders run each VJP once, on the sum of every gradient its
output received, so they compute the same gradients. Only the order in which three or more
gradients of one tensor are added may differ, which can change a float sum in its last bit.
"""
from __future__ import annotations

import contextlib
import itertools
import math
import numbers
from heapq import heappop, heappush
from typing import TYPE_CHECKING, Any, Callable, Sequence

from .axes import (AxisError, _axes, _axis_index, _check_shape, _index_for, _reduce_args,
                   _target_shape, _transpose_order)
from .backend import (Array, asarray, check_same_device, device_name, is_floating, namespace,
                      reduce_sum, resolve_dtype, scatter_add, times_mask, to_device, to_numpy)
from .broadcast import broadcast_shapes, unbroadcast
from .dtypes import _as_data, _common
from .grad_buffers import gradient_product
from .grad_buffers import store as _store_in_buffer
from .tensor_base import TensorBase

__all__ = ["Tensor", "op", "no_grad", "enable_grad", "is_grad_enabled", "AxisError", "matmul",
           "exp", "log", "tanh", "relu", "transpose", "unbroadcast", "gradient_product"]

VJP = Callable[..., Any]


# --- Gradient mode -----------------------------------------------------------------------------


class _GradMode:
    enabled = True


def is_grad_enabled() -> bool:
    """True unless inside :func:`no_grad`."""
    return _GradMode.enabled


class no_grad(contextlib.ContextDecorator):
    """Run operations without recording a graph (for updates and evaluation): use as
    ``with no_grad(): ...`` or as a decorator, as ``torch.no_grad``."""

    def __enter__(self) -> None:
        self._before = _GradMode.enabled
        _GradMode.enabled = False

    def __exit__(self, *exc: object) -> None:
        _GradMode.enabled = self._before


class enable_grad(no_grad):
    """Record the graph again inside a :func:`no_grad` block."""

    def __enter__(self) -> None:
        self._before = _GradMode.enabled
        _GradMode.enabled = True


# --- Defining an operation ---------------------------------------------------------------------


def _freed(g: Array, *saved: Array) -> tuple[Any, ...]:
    raise RuntimeError(
        "backward: this graph was already freed by an earlier backward() call. Call "
        "backward(retain_graph=True) the first time if you need to go through it twice, or "
        "run the forward pass again.")


_made = itertools.count()  # numbers the tensors that operations make, in order


def op(data: Array, parents: Sequence["Tensor"], vjp: VJP, saved: tuple[Any, ...] = (),
       name: str = "op") -> "Tensor":
    """Make the output tensor of an operation and record it in the graph.

    Parameters
    ----------
    data : array
        The forward result, already computed.
    parents : sequence of Tensor
        The inputs the result depends on.
    vjp : callable
        ``vjp(g, *saved)`` gets the gradient ``g`` of the output (an array shaped like
        ``data``) and the saved arrays, and returns one gradient per parent (a tuple; a
        bare array is accepted for one parent; ``None`` for a parent that needs none). Each
        gradient must have its parent's shape: undo broadcasting with
        :func:`minigrad.broadcast.unbroadcast`.
    saved : tuple of arrays
        The arrays the VJP needs. They are handed to it at backward time, counted by
        :mod:`minigrad.graph`, and dropped after ``backward()`` unless ``retain_graph=True``.
    name : str
        The operation's name, shown in ``repr`` and in error messages.

    Example
    -------
    >>> def mul(a, b):
    ...     return op(a.data * b.data, (a, b),
    ...               lambda g, a, b: (unbroadcast(g * b, a.shape), unbroadcast(g * a, b.shape)),
    ...               saved=(a.data, b.data), name="mul")
    """
    out = Tensor.__new__(Tensor)
    out.data = data
    out.grad = None
    out._xp = namespace(data)
    out._retains_grad = False
    out._grad_buffer = None  # a result made a leaf later (requires_grad = True) reads it
    if _GradMode.enabled and any([p.requires_grad for p in parents]):
        out.requires_grad = True
        out._seq = next(_made)  # the order of creation: see backward()
        out._parents = tuple(parents)
        out._vjp = vjp
        out._saved = saved
        out._op = name
    else:  # nothing upstream needs a gradient: record nothing, keep nothing
        out.requires_grad = False
        out._parents = ()
        out._vjp = None
        out._saved = ()
        out._op = None
    return out


def _accumulate_grad(leaf: "Tensor", g: Array) -> None:
    """Add the gradient ``g`` that reached ``leaf`` to ``leaf.grad``, by PyTorch's rule.

    * A leaf whose ``.grad`` is None gets an array of its own, in its own dtype: a *copy*,
      since a VJP may hand one array to several inputs (``add`` returns ``g`` for both).
    * A leaf that has a ``.grad`` gets ``g`` added *in place* (``grad += g``): an array you
      kept from ``p.grad`` changes with it.
    * The fast path's hook: a parameter of a fused optimizer gets its first ``.grad`` written
      into the buffer the optimizer keeps for it (:func:`minigrad.grad_buffers.store`), the
      same array at every step: copy ``p.grad`` to keep it past the next ``backward()``.
    """
    grad = leaf.grad
    if grad is not None:
        if g.dtype != grad.dtype:
            g = leaf._xp.astype(g, grad.dtype)
        grad += g  # in place, as PyTorch: the .grad array stays the same object
    elif leaf._grad_buffer is None or not _store_in_buffer(leaf, g):
        leaf.grad = leaf._xp.astype(g, leaf.data.dtype, copy=True)
        if not leaf.grad.shape:  # NumPy's 0-d results are immutable scalars: += above
            leaf.grad = leaf._xp.asarray(leaf.grad)  # would not change .grad; an array will


# --- The Tensor --------------------------------------------------------------------------------


class Tensor(TensorBase):
    """An array that records the operations applied to it, for reverse-mode autodiff.

    Parameters
    ----------
    data : array, list or number
        The values. Arrays keep their namespace and device (NumPy, CuPy, ...); Python
        numbers and lists become NumPy arrays (Python floats give float64, as in NumPy).
    requires_grad : bool
        Whether ``backward()`` should compute a gradient for this tensor.
    dtype : dtype or str, optional
        Convert the data to this dtype, e.g. ``"float32"``.

    Notes
    -----
    PyTorch is the reference: where it raises, minigrad raises a clear error; where it returns
    a value (a dtype, a gradient at a tie or at 0), minigrad returns the same. Where NumPy and
    PyTorch differ, :class:`~minigrad.tensor_base.TensorBase` says which minigrad follows.
    """

    __slots__ = ("data", "grad", "requires_grad", "_parents", "_vjp", "_saved", "_op",
                 "_xp", "_retains_grad", "_seq", "_grad_buffer", "__weakref__")
    __array_ufunc__ = None  # ``ndarray * Tensor`` calls Tensor.__rmul__, giving a Tensor
    _parents: tuple["Tensor", ...]  # (data, grad, requires_grad, _op, ...: see TensorBase)
    _vjp: VJP | None
    _saved: tuple[Any, ...]
    _seq: int

    if TYPE_CHECKING:  # the methods that the family modules attach (see _attach)
        def _family(self, *args: Any, **kwargs: Any) -> Tensor: ...
        def _pair(self, *args: Any, **kwargs: Any) -> Any: ...
        log1p = expm1 = rsqrt = sin = cos = tan = leaky_relu = abs = __abs__ = clamp = clip = \
            sign = floor = ceil = round = isnan = isinf = __floordiv__ = __rfloordiv__ = \
            __mod__ = __rmod__ = __lt__ = __le__ = __gt__ = __ge__ = var = std = logsumexp = \
            prod = cumsum = argmax = argmin = view = flatten = unsqueeze = squeeze = expand = \
            masked_fill = tril = triu = gather = sqrt = sigmoid = mean = permute = _pow_tensor = \
            _family
        __eq__ = __ne__ = _family  # type: ignore[assignment]
        max = min = _pair  # the values, or (values, indices) with dim=

    def __init__(self, data: Any, requires_grad: bool = False, dtype: Any = None) -> None:
        self.data, self._xp = _as_data(data.data if isinstance(data, Tensor) else data, dtype,
                                       requires_grad)
        self.grad = None
        self.requires_grad = bool(requires_grad)
        self._parents = ()
        self._vjp = None
        self._saved = ()
        self._op = None
        self._retains_grad = False
        self._grad_buffer = None  # where backward() puts a new .grad; see _accumulate_grad

    __hash__ = object.__hash__  # == is elementwise, so keep identity hashing

    def detach(self) -> "Tensor":
        """The same data as a new leaf that does not require grad (outside the graph)."""
        return Tensor(self.data)

    def astype(self, dtype: Any) -> "Tensor":
        """Convert to another dtype (differentiable between floating dtypes)."""
        xp, old = self._xp, self.dtype
        return op(xp.astype(self.data, resolve_dtype(xp, dtype)), (self,),
                  lambda g: xp.astype(g, old), name="astype")

    def to(self, device: str) -> "Tensor":
        """A copy on ``"cpu"`` (NumPy) or ``"cuda"`` (CuPy), as a new leaf."""
        return Tensor(to_device(self.data, device), requires_grad=self.requires_grad)

    # --- backward -----------------------------------------------------------------------------

    def backward(self, grad: Any = None, retain_graph: bool = False) -> None:
        """Compute the gradient of this tensor with respect to every leaf that requires grad.

        Gradients are *added* to ``.grad`` by PyTorch's rule (:func:`_accumulate_grad`; call
        ``zero_grad()`` between steps). Only leaves keep ``.grad``, and non-leaves that called
        :meth:`retain_grad`. The VJPs run newest first (see the module's docstring).

        Parameters
        ----------
        grad : array or Tensor, optional
            The gradient of some final scalar with respect to this tensor. May be left out
            only when this tensor holds a single value (it is then 1).
        retain_graph : bool
            Keep the saved arrays so that ``backward()`` can run through this graph again.
        """
        grad = self._seed(grad)  # checked, or ones for a single value (TensorBase)
        if self._vjp is None:  # a leaf: its gradient is the one given
            _accumulate_grad(self, grad)
            return
        # ``pending`` maps a tensor's number to [tensor, sum of its gradients so far]; the
        # heap holds the negated numbers (plain ints: cheap to compare): newest first.
        pending = {self._seq: [self, grad]}
        waiting = [-self._seq]
        while waiting:
            node, g = pending.pop(-heappop(waiting))
            if node._retains_grad:
                node.grad = g if node.grad is None else node.grad + g
            parent_grads = node._vjp(g, *node._saved)
            if type(parent_grads) is not tuple:
                parent_grads = (parent_grads,)
            for parent, pg in zip(node._parents, parent_grads):
                if pg is None or not parent.requires_grad:
                    continue
                if pg.shape != parent.data.shape:
                    raise ValueError(
                        f"{node._op} backward: the gradient for an input of shape "
                        f"{parent.shape} has shape {tuple(pg.shape)}. Each gradient must have "
                        f"its input's shape: did you unbroadcast?")
                if parent._vjp is None:  # a leaf: nothing flows on, the sum lands in .grad
                    _accumulate_grad(parent, pg)
                    continue
                entry = pending.get(parent._seq)
                if entry is None:  # the first gradient to reach this tensor
                    pending[parent._seq] = [parent, pg]
                    heappush(waiting, -parent._seq)
                else:  # used more than once: the gradients add up
                    entry[1] = entry[1] + pg
            if not retain_graph:
                node._vjp, node._saved = _freed, ()

    # --- elementwise arithmetic -----------------------------------------------------------------
    # A Python number (or a NumPy scalar) is a constant, not a parent: it keeps the tensor's
    # dtype (float32 stays float32) and gets no gradient. Two tensors of different dtypes are
    # first given one dtype by _common() (PyTorch's rule, see the class docstring).

    def __add__(self, other: Any) -> "Tensor":
        c = _scalar(other)
        if c is not None:
            return op(self.data + c, (self,), lambda g: g, name="add")
        a, b = _operands(self, other)
        sa, sb = a.shape, b.shape
        return op(_binary(a, b, "add", lambda x, y: x + y), (a, b),
                  lambda g: (unbroadcast(g, sa), unbroadcast(g, sb)), name="add")

    def __sub__(self, other: Any) -> "Tensor":
        c = _scalar(other)
        if c is not None:
            return op(self.data - c, (self,), lambda g: g, name="sub")
        a, b = _operands(self, other)
        sa, sb = a.shape, b.shape
        return op(_binary(a, b, "sub", lambda x, y: x - y), (a, b),
                  lambda g: (unbroadcast(g, sa), unbroadcast(-g, sb)), name="sub")

    def __mul__(self, other: Any) -> "Tensor":
        c = _scalar(other)
        if c is not None:
            return op(self.data * c, (self,), lambda g: g * c, name="mul")
        a, b = _operands(self, other)
        sa, sb = a.shape, b.shape
        return op(_binary(a, b, "mul", lambda x, y: x * y), (a, b),
                  lambda g, x, y: (unbroadcast(g * y, sa), unbroadcast(g * x, sb)),
                  saved=(a.data, b.data), name="mul")

    def __truediv__(self, other: Any) -> "Tensor":
        c = _scalar(other)
        if c is not None:
            return op(self.data / c, (self,), lambda g: g / c, name="div")
        a, b = _operands(self, other)
        sa, sb = a.shape, b.shape
        return op(_binary(a, b, "div", lambda x, y: x / y), (a, b),
                  lambda g, x, y: (unbroadcast(g / y, sa), unbroadcast(-g * x / (y * y), sb)),
                  saved=(a.data, b.data), name="div")

    def __neg__(self) -> "Tensor":
        return op(-self.data, (self,), lambda g: -g, name="neg")

    def __pow__(self, other: Any) -> "Tensor":
        """``x ** e``. Gradients as PyTorch: ``e * x ** (e - 1)`` for ``x``, but 0 where
        ``e == 0`` (so ``x ** 0`` has gradient 0 even at ``x = 0``); ``x ** e * log(x)`` for
        ``e``, but 0 where ``x == 0`` and ``e >= 0``."""
        xp, p = self._xp, _scalar(other)
        if p == 0:  # x ** 0 == 1 everywhere: gradient 0 (not 0 * x ** -1, NaN at 0)
            return op(self.data ** p, (self,), lambda g: xp.zeros_like(g), name="pow")
        if p is not None:  # x ** p: p * x ** (p - 1)
            return op(self.data ** p, (self,), lambda g, x: g * p * x ** (p - 1),
                      saved=(self.data,), name="pow")
        return self._pow_tensor(other)  # a tensor exponent: minigrad/elementwise.py

    __radd__ = __add__  # (x + y and y + x are the same array sum)

    def __rsub__(self, other: Any) -> "Tensor":
        return -self + other if _scalar(other) is not None else _lift(other, self) - self

    __rmul__ = __mul__

    def __rtruediv__(self, other: Any) -> "Tensor":
        c = _scalar(other)
        if c is not None:  # c / x: -c / x**2
            return op(c / self.data, (self,), lambda g, x: -g * c / (x * x),
                      saved=(self.data,), name="div")
        return _lift(other, self) / self

    def __rpow__(self, other: Any) -> "Tensor":
        return _lift(other, self) ** self

    def __matmul__(self, other: Any) -> "Tensor":
        return matmul(self, _lift(other, self))

    def __rmatmul__(self, other: Any) -> "Tensor":
        return matmul(_lift(other, self), self)

    # --- elementwise functions (more in minigrad/elementwise.py) -------------------------------

    def exp(self) -> "Tensor":
        y = self._xp.exp(self.data)
        return op(y, (self,), lambda g, y: g * y, saved=(y,), name="exp")

    def log(self) -> "Tensor":
        return op(self._xp.log(self.data), (self,), lambda g, x: g / x,
                  saved=(self.data,), name="log")

    def tanh(self) -> "Tensor":
        y = self._xp.tanh(self.data)
        return op(y, (self,), lambda g, y: g * (1 - y * y), saved=(y,), name="tanh")

    def relu(self) -> "Tensor":
        y = self._xp.maximum(self.data, 0)  # backward: g * (y != 0), faster than where()
        # (y >= 0, so y != 0 is PyTorch's "not y <= 0": the gradient passes at a NaN, too)
        return op(y, (self,), lambda g, y: times_mask(g, y != 0), saved=(y,), name="relu")

    # --- reductions (more in minigrad/reductions.py) -------------------------------------------
    # ``axis`` (NumPy) and ``dim`` (PyTorch) are the same argument: an int, a tuple or a list
    # of ints, or None for all axes; ``keepdims`` and ``keepdim`` likewise.

    def sum(self, axis: Any = None, keepdims: bool = False, *, dim: Any = None,
            keepdim: bool | None = None) -> "Tensor":
        """Sum over ``axis`` (all axes by default); each input gets the output's gradient."""
        axis, keepdims = _reduce_args(axis, dim, keepdims, keepdim)
        xp, shape = self._xp, self.shape
        axes = _axes(self.ndim, axis)
        kept = tuple(1 if i in axes else n for i, n in enumerate(shape))
        return op(reduce_sum(self.data, axis=axes, keepdims=keepdims), (self,),
                  lambda g: xp.broadcast_to(xp.reshape(g, kept), shape), name="sum")

    # --- shape (more in minigrad/reshaping.py) -------------------------------------------------

    def reshape(self, *shape: Any) -> "Tensor":
        """The same values in a new shape; the gradient is reshaped back."""
        shape = _target_shape(shape)
        xp, old = self._xp, self.shape
        try:
            y = xp.reshape(self.data, shape)
        except TypeError:
            _check_shape(shape, "reshape")  # a size that is not an int: named
            raise
        except ValueError:
            raise ValueError(f"reshape: cannot reshape shape {old} ({self.size} values) "
                             f"to {shape}") from None
        return op(y, (self,), lambda g: xp.reshape(g, old), name="reshape")

    def transpose(self, *axes: int | Sequence[int]) -> "Tensor":
        """Swap two axes (PyTorch), or permute all of them (NumPy); reverse them by default.

        ``x.transpose(0, 2)`` -- two separate ints -- swaps axes 0 and 2 of a tensor of any
        number of axes, as ``torch.transpose`` (so ``m.transpose(0, 1)`` of a matrix is its
        transpose, as in PyTorch, not NumPy's identity permutation). ``x.transpose(2, 0, 1)``
        or ``x.transpose((1, 0))`` (one tuple, or as many ints as the tensor has axes, more
        than two) is a full permutation, as ``numpy.transpose``. Axes out of range are an
        error. The gradient is permuted back.
        """
        order = _transpose_order(self.ndim, axes, self.shape)
        xp, inverse = self._xp, tuple(sorted(range(self.ndim), key=order.__getitem__))
        return op(xp.permute_dims(self.data, tuple(order)), (self,),
                  lambda g: xp.permute_dims(g, inverse), name="transpose")

    @property
    def T(self) -> "Tensor":
        """All axes reversed (the transpose of a matrix)."""
        return self.transpose()

    def __getitem__(self, index: Any) -> "Tensor":
        """Index like NumPy (PyTorch agrees for ints, slices, ``None``, ``...``, integer and
        boolean arrays); the gradient is added back at the positions read (repeats add)."""
        xp, shape, dtype = self._xp, self.shape, self.dtype
        items = index if isinstance(index, tuple) else (index,)
        index = _index_for(tuple(_raw(i) for i in items), self.data)
        return op(self.data[index], (self,),
                  lambda g: scatter_add(xp, shape, dtype, index, g), name="index")


def _attach(**methods: Callable[..., Any]) -> None:
    """Make functions of a family module methods of :class:`Tensor`: ``_attach(sin=sin)``
    gives ``x.sin()``, the function with the tensor as its first argument."""
    for name, function in methods.items():
        setattr(Tensor, name, function)


# --- Functions: matmul, and the methods above as functions (``mg.exp(x)``) --------------------


def matmul(a: Tensor, b: Tensor) -> Tensor:
    """Matrix product of vectors, matrices or stacks of matrices (as ``numpy.matmul``).

    For ``C = A @ B``: ``dA = dC @ B.T`` and ``dB = A.T @ dC`` -- the only products whose
    shapes fit. A vector is treated as a one-row (left) or one-column (right) matrix, and
    stacked (batch) axes broadcast, so their gradients are unbroadcast.
    """
    a, b = _operands(a, b, "matmul")
    xp = a._xp
    sa, sb = a.shape, b.shape
    if not sa or not sb:
        raise ValueError(f"matmul: both operands need at least one axis; got shapes {sa} and {sb}")
    k_a, k_b = sa[-1], sb[-2] if len(sb) > 1 else sb[0]
    if k_a != k_b:
        raise ValueError(f"matmul: shapes {sa} and {sb} do not align ({k_a} != {k_b})")
    try:
        y = a.data @ b.data
    except (TypeError, ValueError):
        check_same_device("matmul", a.data, b.data)  # raises naming both devices
        broadcast_shapes(sa[:-2], sb[:-2], op="matmul (batch axes)")
        raise

    # A vector is a one-row (left) or one-column (right) matrix; g gets that axis back.
    sa2 = sa if len(sa) > 1 else (1,) + sa
    sb2 = sb if len(sb) > 1 else sb + (1,)
    sg2 = broadcast_shapes(sa2[:-2], sb2[:-2]) + (sa2[-2], sb2[-1])

    def vjp(g: Array, x: Array, w: Array) -> tuple[Any, ...]:
        g = xp.reshape(g, sg2)
        ga = g @ xp.matrix_transpose(xp.reshape(w, sb2))
        gb = xp.matrix_transpose(xp.reshape(x, sa2)) @ g
        return xp.reshape(unbroadcast(ga, sa2), sa), xp.reshape(unbroadcast(gb, sb2), sb)

    return op(y, (a, b), vjp, saved=(a.data, b.data), name="matmul")


def _tensor_arg(x: Any, name: str) -> Tensor:
    """``x`` itself if it is a Tensor; else a TypeError naming the function and what came."""
    if isinstance(x, Tensor):
        return x
    raise TypeError(f"{name}: expected a Tensor; got {type(x).__module__}.{type(x).__name__}. "
                    f"Wrap it first: minigrad.tensor(x)")


def _function(name: str) -> Callable[..., Tensor]:
    """The method ``name`` as a function, ``mg.exp(x)`` for ``x.exp()``. It checks that ``x``
    is a Tensor (as PyTorch does): an array or a list gets a TypeError saying how to wrap it."""
    def function(x: Tensor, *args: Any) -> Tensor:
        return getattr(_tensor_arg(x, name), name)(*args)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"``{name}(x)`` is ``x.{name}()``. {getattr(Tensor, name).__doc__ or ''}"
    return function


exp, log, tanh, relu, transpose = map(_function, ("exp", "log", "tanh", "relu", "transpose"))

# Operations that lived here before the core was cut to its size, and the module each moved to:
# ``from minigrad.tensor import where`` still finds it there (typed code imports the new home).
_MOVED = {name: home for home, names in (
    ("elementwise", "sqrt sigmoid log1p expm1 rsqrt sin cos tan leaky_relu abs clamp clip sign "
                    "floor ceil round maximum minimum where"),
    ("comparisons", "isnan isinf"), ("creation", "tensor"),
    ("reshaping", "permute flatten unsqueeze squeeze concatenate cat stack"),
    ("reductions", "var std logsumexp prod cumsum argmax argmin MaxMin"),
    ("selection", "masked_fill tril triu gather")) for name in names.split()}

if not TYPE_CHECKING:
    def __getattr__(name: str) -> Any:
        if name not in _MOVED:
            raise AttributeError(f"module 'minigrad.tensor' has no attribute {name!r}")
        import importlib
        return getattr(importlib.import_module(f"minigrad.{_MOVED[name]}"), name)


# --- Helpers: numbers as constants, tensors as operands, errors that name the clash ----------


def _scalar(x: Any) -> Any:
    """``x`` as a Python number if it is a number (NumPy scalars included), else None: so
    ``np.float64(2)`` is 2.0, and does not turn a float32 tensor into float64 (PyTorch's rule:
    a number never sets the dtype of a tensor of the same kind)."""
    kind = type(x)
    if kind is float or kind is int:
        return x
    if isinstance(x, Tensor):  # the common case in a network: return before the slower check
        return None
    if isinstance(x, numbers.Number) and not isinstance(x, (bool, complex)):
        return x.item() if hasattr(x, "item") else x
    return None


def _raw(x: Any) -> Any:
    return x.data if isinstance(x, Tensor) else x


def _lift(x: Any, like: Tensor) -> Tensor:
    """``x`` as a tensor: a number takes ``like``'s (floating) dtype, as PyTorch."""
    if isinstance(x, Tensor):
        return x
    c = _scalar(x)
    if c is not None and is_floating(like._xp, like.dtype):
        return Tensor(asarray(c, dtype=like.dtype, like=like.data))
    return Tensor(asarray(x if c is None else c, like=like.data))


def _operands(a: Any, b: Any, name: str = "operation") -> tuple[Tensor, Tensor]:
    """Both operands as tensors of one dtype; at least one must already be a tensor."""
    if isinstance(a, Tensor):
        if isinstance(b, Tensor) and a.data.dtype == b.data.dtype:
            return a, b  # the common case, first
        b = _lift(b, a)
    elif isinstance(b, Tensor):
        a = _lift(a, b)
    else:
        raise TypeError(f"{name}: at least one argument must be a Tensor; got "
                        f"{type(a).__name__} and {type(b).__name__}")
    return _common(a, b)


def _binary(a: Tensor, b: Tensor, name: str, fn: Callable[[Array, Array], Array]) -> Array:
    """Apply ``fn`` to the arrays, turning NumPy's broadcasting error into a clear one."""
    try:
        return fn(a.data, b.data)
    except (TypeError, ValueError):
        check_same_device(name, a.data, b.data)  # raises naming both devices (CPU and GPU)
        broadcast_shapes(a.shape, b.shape, op=name)  # raises with the axes that clash
        raise


def _host_values(x: Array) -> bool:
    """True when reading ``x``'s values costs no wait on a GPU (NumPy, array-api-strict)."""
    return not device_name(x).startswith("cuda")


