"""The tensor autodiff engine.

A :class:`Tensor` wraps an array (``.data``) and, once ``backward()`` has run, holds its gradient
(``.grad``, same shape). A tensor made by an operation also remembers its *parents* and one
*vector-Jacobian product* (VJP): a function that maps the gradient of the output to the
gradients of the parents. Every operation below is built by :func:`op` from three things:

* the forward result, computed right away on arrays;
* the parents (the input tensors);
* the VJP, a formula in the output gradient ``g`` and the arrays saved for it (``saved=``).

The VJP never refers to the output tensor itself, only to arrays. So an output does not keep
itself alive through its own closure, the graph has no reference cycles, and it is freed the
moment the last tensor of it goes away.

``backward()`` sorts the graph topologically (without recursion), runs each VJP once and sums
the gradients that reach a tensor from all its uses. Array math goes through the array's own
namespace (``self._xp``), so the same code runs on NumPy, CuPy and array-api-strict.
"""
from __future__ import annotations

import contextlib
import itertools
from heapq import heappop, heappush
from typing import Any, Callable, Sequence

from .backend import (asarray, check_same_device, is_floating, namespace, resolve_dtype,
                      scatter_add, to_numpy)
from .broadcast import broadcast_shapes, unbroadcast

__all__ = [
    "Tensor", "tensor", "op", "no_grad", "enable_grad", "is_grad_enabled",
    "maximum", "minimum", "concatenate", "stack", "where",
    "exp", "log", "sqrt", "tanh", "sigmoid", "relu", "leaky_relu",
]

Array = Any  # an array of any array-API namespace (NumPy, CuPy, array-api-strict)
VJP = Callable[..., Any]


# ---------------------------------------------------------------------------------------------
# Gradient mode


class _GradMode:
    enabled = True


def is_grad_enabled() -> bool:
    """True unless inside :func:`no_grad`."""
    return _GradMode.enabled


class no_grad(contextlib.ContextDecorator):
    """Run operations without recording a graph (for updates and evaluation).

    Use as ``with no_grad(): ...`` or as a decorator, as ``torch.no_grad``.
    """

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


# ---------------------------------------------------------------------------------------------
# Defining an operation


def _freed(g: Array, *saved: Array) -> tuple:
    raise RuntimeError(
        "backward: this graph was already freed by an earlier backward() call. Call "
        "backward(retain_graph=True) the first time if you need to go through it twice, or "
        "run the forward pass again.")


_made = itertools.count()  # numbers the tensors that operations make, in order


def op(data: Array, parents: Sequence["Tensor"], vjp: VJP, saved: tuple = (),
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
    """Add the gradient ``g`` that reached ``leaf`` to ``leaf.grad`` (PyTorch's rule).

    The first gradient is *copied*, because a VJP may hand one array to several inputs
    (``add`` returns ``g`` for both): if two leaves kept the very same array, changing one
    ``.grad`` in place would change the other. The copy lands in the leaf's gradient buffer
    when a fused optimizer gave it one (the same array at every step: no new memory), else in
    a new array of the leaf's dtype. Later gradients are added in place (``grad += g``).
    """
    grad = leaf.grad
    if grad is None:
        home = leaf._grad_buffer  # fast path: a buffer kept by a fused optimizer
        if home is not None and home.dtype == leaf.data.dtype and type(home) is type(g):
            home[...] = g  # a copy into memory the leaf owns (and the dtype is the leaf's)
            leaf.grad = home
        else:
            leaf.grad = leaf._xp.astype(g, leaf.data.dtype, copy=True)
    else:
        if g.dtype != grad.dtype:
            g = leaf._xp.astype(g, grad.dtype)
        grad += g  # in place, as PyTorch: the .grad array stays the same object


# ---------------------------------------------------------------------------------------------
# The Tensor


class Tensor:
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
    """

    __slots__ = ("data", "grad", "requires_grad", "_parents", "_vjp", "_saved", "_op",
                 "_xp", "_retains_grad", "_seq", "_grad_buffer", "__weakref__")
    __array_ufunc__ = None  # ``ndarray * Tensor`` calls Tensor.__rmul__, giving a Tensor

    def __init__(self, data: Any, requires_grad: bool = False, dtype: Any = None) -> None:
        if isinstance(data, Tensor):
            data = data.data
        self.data = asarray(data, dtype=dtype)
        self._xp = namespace(self.data)
        if requires_grad and not is_floating(self._xp, self.data.dtype):
            raise TypeError(f"Tensor: only floating-point tensors can require grad; got dtype "
                            f"{self.data.dtype}. Pass dtype='float64' or float data.")
        self.grad = None
        self.requires_grad = bool(requires_grad)
        self._parents = ()
        self._vjp = None
        self._saved = ()
        self._op = None
        self._retains_grad = False
        self._grad_buffer = None  # where backward() puts a new .grad; see _accumulate_grad

    # --- what a tensor is -------------------------------------------------------------------

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.data.shape)

    @property
    def ndim(self) -> int:
        return self.data.ndim

    @property
    def dtype(self) -> Any:
        return self.data.dtype

    @property
    def size(self) -> int:
        n = 1
        for d in self.data.shape:
            n *= d
        return n

    @property
    def is_leaf(self) -> bool:
        """True for tensors not made by a recorded operation (inputs and parameters)."""
        return self._vjp is None

    @property
    def device(self) -> str:
        from .backend import device_name
        return device_name(self.data)

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.data.shape[0]

    def __repr__(self) -> str:
        body = repr(to_numpy(self.data)).replace("array(", "tensor(", 1)
        extra = ""
        if self._op is not None:
            extra = f", grad_fn={self._op}"
        elif self.requires_grad:
            extra = ", requires_grad=True"
        return body[:-1] + extra + ")" if extra else body

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ValueError(f"the truth value of a tensor of shape {self.shape} is ambiguous; "
                             "use .item() on a single value")
        return bool(self.data)

    __hash__ = object.__hash__  # == is elementwise, so keep identity hashing

    def item(self) -> float | int | bool:
        """The single value of a one-element tensor, as a Python number."""
        if self.size != 1:
            raise ValueError(f"item(): tensor has {self.size} elements, expected 1")
        return to_numpy(self.data).item()

    def numpy(self) -> Any:
        """The data as a NumPy array (copied from the GPU if needed)."""
        return to_numpy(self.data)

    def detach(self) -> "Tensor":
        """The same data as a new leaf that does not require grad (outside the graph)."""
        return Tensor(self.data)

    def retain_grad(self) -> "Tensor":
        """Keep ``.grad`` on this non-leaf tensor after ``backward()`` (leaves always do)."""
        self._retains_grad = True
        return self

    def requires_grad_(self, flag: bool = True) -> "Tensor":
        """Set ``requires_grad`` in place and return ``self``."""
        if flag and not is_floating(self._xp, self.data.dtype):
            raise TypeError(f"requires_grad_: integer tensors (dtype {self.data.dtype}) cannot "
                            "require grad")
        self.requires_grad = flag
        return self

    def astype(self, dtype: Any) -> "Tensor":
        """Convert to another dtype (differentiable between floating dtypes)."""
        xp = self._xp
        old = self.dtype
        return op(xp.astype(self.data, resolve_dtype(xp, dtype)), (self,),
                  lambda g: xp.astype(g, old), name="astype")

    def to(self, device: str) -> "Tensor":
        """A copy on ``"cpu"`` (NumPy) or ``"cuda"`` (CuPy), as a new leaf."""
        from .backend import to_device
        return Tensor(to_device(self.data, device), requires_grad=self.requires_grad)

    # --- backward -----------------------------------------------------------------------------

    def backward(self, grad: Any = None, retain_graph: bool = False) -> None:
        """Compute the gradient of this tensor with respect to every leaf that requires grad.

        Gradients are *added* to ``.grad`` (call ``zero_grad()`` between steps). Only leaves
        keep ``.grad``, and non-leaves that called :meth:`retain_grad`.

        A leaf's ``.grad`` follows PyTorch's rule:

        * a leaf whose ``.grad`` is None gets an array of its own, in its own dtype: never an
          array that another tensor's ``.grad`` shares (in ``a + b`` both inputs receive the
          same output gradient; each leaf gets its own copy);
        * a leaf that already has a ``.grad`` gets the new gradient added *in place*, into the
          same array (``grad += g``): an array you kept from ``p.grad`` changes with it;
        * a parameter updated by a fused optimizer (:mod:`minigrad.optim`) gets its new
          ``.grad`` written into a buffer the optimizer keeps for it, the same array at every
          step, so after ``zero_grad()`` an array kept from an earlier step's ``p.grad`` is
          overwritten by the next ``backward()``. Keep ``p.grad.copy()`` if you need it.

        Parameters
        ----------
        grad : array or Tensor, optional
            The gradient of some final scalar with respect to this tensor. May be left out
            only when this tensor holds a single value (it is then 1).
        retain_graph : bool
            Keep the saved arrays so that ``backward()`` can run through this graph again.
        """
        if not self.requires_grad:
            raise RuntimeError("backward: this tensor does not require grad; none of the "
                               "tensors it was computed from has requires_grad=True")
        xp = self._xp
        if grad is None:
            if self.size != 1:
                raise RuntimeError(
                    f"backward: grad can be left out only for a single-value output; this "
                    f"output has shape {self.shape}. Reduce it first (e.g. .sum()) or pass "
                    f"backward(grad) with an array of shape {self.shape}.")
            grad = xp.ones_like(self.data)
        else:
            grad = grad.data if isinstance(grad, Tensor) else asarray(grad, like=self.data)
            if tuple(grad.shape) != self.shape:
                raise ValueError(f"backward: grad has shape {tuple(grad.shape)} but the output "
                                 f"has shape {self.shape}")

        if self._vjp is None:  # a leaf: its gradient is the one given
            _accumulate_grad(self, grad)
            return
        # Each tensor made by an operation is numbered when it is made, so after its inputs.
        # Running the waiting tensors newest first is therefore a topological order: a VJP runs
        # once, after every use of its tensor has sent its gradient back. A heap hands out the
        # newest; ``grads`` holds the sums still on their way.
        grads = {id(self): grad}
        waiting = [(-self._seq, self)]
        while waiting:
            node = heappop(waiting)[1]
            g = grads.pop(id(node))
            if node._retains_grad:
                node.grad = g if node.grad is None else node.grad + g
            parent_grads = node._vjp(g, *node._saved)
            if not isinstance(parent_grads, tuple):
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
                elif id(parent) in grads:  # used more than once: the gradients add up
                    grads[id(parent)] = grads[id(parent)] + pg
                else:
                    grads[id(parent)] = pg
                    heappush(waiting, (-parent._seq, parent))
            if not retain_graph:
                node._vjp, node._saved = _freed, ()

    # --- elementwise arithmetic -----------------------------------------------------------------
    # A Python number is a constant, not a parent: it keeps the tensor's dtype (float32 stays
    # float32) and gets no gradient.

    def __add__(self, other: Any) -> "Tensor":
        if _is_number(other):
            return op(self.data + other, (self,), lambda g: g, name="add")
        a, b = self, _lift(other, self)
        sa, sb = a.shape, b.shape
        return op(_binary(a, b, "add", lambda x, y: x + y), (a, b),
                  lambda g: (unbroadcast(g, sa), unbroadcast(g, sb)), name="add")

    def __sub__(self, other: Any) -> "Tensor":
        if _is_number(other):
            return op(self.data - other, (self,), lambda g: g, name="sub")
        a, b = self, _lift(other, self)
        sa, sb = a.shape, b.shape
        return op(_binary(a, b, "sub", lambda x, y: x - y), (a, b),
                  lambda g: (unbroadcast(g, sa), unbroadcast(-g, sb)), name="sub")

    def __mul__(self, other: Any) -> "Tensor":
        if _is_number(other):
            return op(self.data * other, (self,), lambda g: g * other, name="mul")
        a, b = self, _lift(other, self)
        sa, sb = a.shape, b.shape
        return op(_binary(a, b, "mul", lambda x, y: x * y), (a, b),
                  lambda g, x, y: (unbroadcast(g * y, sa), unbroadcast(g * x, sb)),
                  saved=(a.data, b.data), name="mul")

    def __truediv__(self, other: Any) -> "Tensor":
        if _is_number(other):
            return op(self.data / other, (self,), lambda g: g / other, name="div")
        a, b = self, _lift(other, self)
        sa, sb = a.shape, b.shape
        return op(_binary(a, b, "div", lambda x, y: x / y), (a, b),
                  lambda g, x, y: (unbroadcast(g / y, sa), unbroadcast(-g * x / (y * y), sb)),
                  saved=(a.data, b.data), name="div")

    def __neg__(self) -> "Tensor":
        return op(-self.data, (self,), lambda g: -g, name="neg")

    def __pow__(self, other: Any) -> "Tensor":
        if _is_number(other):  # x ** p: p * x ** (p - 1)
            p = other
            return op(self.data ** p, (self,), lambda g, x: g * p * x ** (p - 1),
                      saved=(self.data,), name="pow")
        a, b = self, _lift(other, self)
        sa, sb = a.shape, b.shape
        y = _binary(a, b, "pow", lambda x, e: x ** e)
        xp = self._xp
        if not b.requires_grad:  # only the base needs a gradient (log of x may not exist)
            return op(y, (a,), lambda g, x, e: unbroadcast(g * e * x ** (e - 1), sa),
                      saved=(a.data, b.data), name="pow")
        return op(y, (a, b),  # x ** e: e * x ** (e - 1) for x, x ** e * log(x) for e
                  lambda g, x, e, y: (unbroadcast(g * e * x ** (e - 1), sa),
                                      unbroadcast(g * y * xp.log(x), sb)),
                  saved=(a.data, b.data, y), name="pow")

    def __radd__(self, other: Any) -> "Tensor":
        return self + other

    def __rsub__(self, other: Any) -> "Tensor":
        return -self + other if _is_number(other) else _lift(other, self) - self

    def __rmul__(self, other: Any) -> "Tensor":
        return self * other

    def __rtruediv__(self, other: Any) -> "Tensor":
        if _is_number(other):  # c / x: -c / x**2
            c = other
            return op(c / self.data, (self,), lambda g, x: -g * c / (x * x),
                      saved=(self.data,), name="div")
        return _lift(other, self) / self

    def __rpow__(self, other: Any) -> "Tensor":
        return _lift(other, self) ** self

    def __matmul__(self, other: Any) -> "Tensor":
        return matmul(self, _lift(other, self))

    def __rmatmul__(self, other: Any) -> "Tensor":
        return matmul(_lift(other, self), self)

    # --- comparisons: no gradient, a boolean tensor --------------------------------------------

    def __lt__(self, other: Any) -> "Tensor":
        return Tensor(self.data < _raw(other))

    def __le__(self, other: Any) -> "Tensor":
        return Tensor(self.data <= _raw(other))

    def __gt__(self, other: Any) -> "Tensor":
        return Tensor(self.data > _raw(other))

    def __ge__(self, other: Any) -> "Tensor":
        return Tensor(self.data >= _raw(other))

    def __eq__(self, other: Any) -> "Tensor":  # type: ignore[override]
        return Tensor(self.data == _raw(other))

    def __ne__(self, other: Any) -> "Tensor":  # type: ignore[override]
        return Tensor(self.data != _raw(other))

    # --- elementwise functions ------------------------------------------------------------------

    def exp(self) -> "Tensor":
        y = self._xp.exp(self.data)
        return op(y, (self,), lambda g, y: g * y, saved=(y,), name="exp")

    def log(self) -> "Tensor":
        return op(self._xp.log(self.data), (self,), lambda g, x: g / x,
                  saved=(self.data,), name="log")

    def sqrt(self) -> "Tensor":
        y = self._xp.sqrt(self.data)
        return op(y, (self,), lambda g, y: g / (2 * y), saved=(y,), name="sqrt")

    def tanh(self) -> "Tensor":
        y = self._xp.tanh(self.data)
        return op(y, (self,), lambda g, y: g * (1 - y * y), saved=(y,), name="tanh")

    def sigmoid(self) -> "Tensor":
        y = 0.5 * (self._xp.tanh(0.5 * self.data) + 1)  # = 1 / (1 + exp(-x)), never overflows
        return op(y, (self,), lambda g, y: g * y * (1 - y), saved=(y,), name="sigmoid")

    def relu(self) -> "Tensor":
        xp = self._xp
        y = xp.maximum(self.data, 0)  # backward: g * (y > 0); a product, faster than where()
        return op(y, (self,), lambda g, y: g * xp.astype(y > 0, g.dtype), saved=(y,), name="relu")

    def leaky_relu(self, slope: float = 0.01) -> "Tensor":
        xp = self._xp
        x = self.data
        return op(xp.where(x > 0, x, slope * x), (self,),
                  lambda g, x: xp.where(x > 0, g, slope * g), saved=(x,), name="leaky_relu")

    def abs(self) -> "Tensor":
        xp = self._xp
        return op(xp.abs(self.data), (self,), lambda g, x: g * xp.sign(x),
                  saved=(self.data,), name="abs")

    __abs__ = abs

    # --- reductions -----------------------------------------------------------------------------

    def sum(self, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> "Tensor":
        """Sum over ``axis`` (all axes by default); each input gets the output's gradient."""
        xp, shape = self._xp, self.shape
        kept = _kept_shape(shape, axis)
        return op(xp.sum(self.data, axis=axis, keepdims=keepdims), (self,),
                  lambda g: xp.broadcast_to(xp.reshape(g, kept), shape), name="sum")

    def mean(self, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> "Tensor":
        """Mean over ``axis``: a sum divided by the number of values averaged."""
        count = self.size // _prod(_kept_shape(self.shape, axis))
        return self.sum(axis=axis, keepdims=keepdims) / count

    def max(self, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> "Tensor":
        """Largest value over ``axis``; the gradient goes to the (first) position selected."""
        return _extreme(self, axis, keepdims, "max")

    def min(self, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> "Tensor":
        """Smallest value over ``axis``; the gradient goes to the (first) position selected."""
        return _extreme(self, axis, keepdims, "min")

    # --- shape ----------------------------------------------------------------------------------

    def reshape(self, *shape: Any) -> "Tensor":
        """The same values in a new shape; the gradient is reshaped back."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        xp, old = self._xp, self.shape
        try:
            y = xp.reshape(self.data, shape)
        except ValueError:
            raise ValueError(f"reshape: cannot reshape shape {old} ({self.size} values) "
                             f"to {shape}") from None
        return op(y, (self,), lambda g: xp.reshape(g, old), name="reshape")

    def transpose(self, *axes: int) -> "Tensor":
        """Permute the axes (reverse them by default); the gradient is permuted back."""
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        xp = self._xp
        axes = tuple(range(self.ndim))[::-1] if not axes else tuple(a % self.ndim for a in axes)
        if sorted(axes) != list(range(self.ndim)):
            raise ValueError(f"transpose: axes {axes} are not a permutation of the "
                             f"{self.ndim} axes of shape {self.shape}")
        inverse = tuple(sorted(range(self.ndim), key=axes.__getitem__))
        return op(xp.permute_dims(self.data, axes), (self,),
                  lambda g: xp.permute_dims(g, inverse), name="transpose")

    @property
    def T(self) -> "Tensor":
        return self.transpose()

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> "Tensor":
        """Merge axes ``start_dim`` to ``end_dim`` into one (all of them by default)."""
        shape = self.shape
        if not shape:
            return self.reshape((1,))
        start, end = start_dim % len(shape), end_dim % len(shape)
        return self.reshape(shape[:start] + (_prod(shape[start:end + 1]),) + shape[end + 1:])

    def __getitem__(self, index: Any) -> "Tensor":
        """Index like NumPy; the gradient is added back at the positions read (repeats add)."""
        xp, shape, dtype = self._xp, self.shape, self.dtype
        index = _index_for(index, self.data)
        return op(self.data[index], (self,),
                  lambda g: scatter_add(xp, shape, dtype, index, g), name="index")


# ---------------------------------------------------------------------------------------------
# Operations on several tensors


def matmul(a: Tensor, b: Tensor) -> Tensor:
    """Matrix product of vectors, matrices or stacks of matrices (as ``numpy.matmul``).

    For ``C = A @ B``: ``dA = dC @ B.T`` and ``dB = A.T @ dC`` -- the only products whose
    shapes fit. A vector is treated as a one-row (left) or one-column (right) matrix, and
    stacked (batch) axes broadcast, so their gradients are unbroadcast.
    """
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

    def vjp(g: Array, x: Array, w: Array) -> tuple:
        g = xp.reshape(g, sg2)
        ga = g @ xp.matrix_transpose(xp.reshape(w, sb2))
        gb = xp.matrix_transpose(xp.reshape(x, sa2)) @ g
        return xp.reshape(unbroadcast(ga, sa2), sa), xp.reshape(unbroadcast(gb, sb2), sb)

    return op(y, (a, b), vjp, saved=(a.data, b.data), name="matmul")


def maximum(a: Any, b: Any) -> Tensor:
    """Elementwise larger of ``a`` and ``b``; at ties each gets half the gradient (as PyTorch)."""
    return _pick(a, b, "maximum")


def minimum(a: Any, b: Any) -> Tensor:
    """Elementwise smaller of ``a`` and ``b``; at ties each gets half the gradient."""
    return _pick(a, b, "minimum")


def where(condition: Any, a: Any, b: Any) -> Tensor:
    """``a`` where ``condition`` holds, else ``b``; each gets the gradient where it was chosen."""
    like = a if isinstance(a, Tensor) else b
    a, b = _lift(a, like), _lift(b, like)
    xp, cond = a._xp, _raw(condition)
    sa, sb = a.shape, b.shape
    return op(xp.where(cond, a.data, b.data), (a, b),
              lambda g: (unbroadcast(xp.where(cond, g, 0), sa),
                         unbroadcast(xp.where(cond, 0, g), sb)), name="where")


def concatenate(tensors: Sequence[Tensor], axis: int = 0) -> Tensor:
    """Join tensors along an existing axis; each gets back its own slice of the gradient."""
    tensors = [t if isinstance(t, Tensor) else Tensor(t) for t in tensors]
    xp = tensors[0]._xp
    y = xp.concat([t.data for t in tensors], axis=axis)
    ax = axis % y.ndim
    bounds = [0]
    for t in tensors:
        bounds.append(bounds[-1] + t.shape[ax])
    before = (slice(None),) * ax

    def vjp(g: Array) -> tuple:
        return tuple(g[before + (slice(lo, hi), ...)] for lo, hi in zip(bounds, bounds[1:]))

    return op(y, tensors, vjp, name="concatenate")


def stack(tensors: Sequence[Tensor], axis: int = 0) -> Tensor:
    """Join same-shaped tensors along a new axis; each gets back its own slice of the gradient."""
    tensors = [t if isinstance(t, Tensor) else Tensor(t) for t in tensors]
    xp = tensors[0]._xp
    y = xp.stack([t.data for t in tensors], axis=axis)
    before = (slice(None),) * (axis % y.ndim)
    return op(y, tensors, lambda g: tuple(g[before + (i, ...)] for i in range(len(tensors))),
              name="stack")


def tensor(data: Any, requires_grad: bool = False, dtype: Any = None,
           device: str | None = None) -> Tensor:
    """Make a tensor, as ``torch.tensor``: ``tensor([1.0, 2.0], requires_grad=True)``."""
    t = Tensor(data, requires_grad=requires_grad, dtype=dtype)
    return t.to(device) if device is not None else t


def exp(x: Tensor) -> Tensor:
    return x.exp()


def log(x: Tensor) -> Tensor:
    return x.log()


def sqrt(x: Tensor) -> Tensor:
    return x.sqrt()


def tanh(x: Tensor) -> Tensor:
    return x.tanh()


def sigmoid(x: Tensor) -> Tensor:
    return x.sigmoid()


def relu(x: Tensor) -> Tensor:
    return x.relu()


def leaky_relu(x: Tensor, slope: float = 0.01) -> Tensor:
    return x.leaky_relu(slope)


# ---------------------------------------------------------------------------------------------
# Helpers


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _raw(x: Any) -> Any:
    return x.data if isinstance(x, Tensor) else x


def _lift(x: Any, like: Tensor) -> Tensor:
    """``x`` as a tensor: a Python number takes ``like``'s (floating) dtype, as NumPy does."""
    if isinstance(x, Tensor):
        return x
    if _is_number(x) and is_floating(like._xp, like.dtype):
        return Tensor(asarray(x, dtype=like.dtype, like=like.data))
    return Tensor(asarray(x, like=like.data))


def _binary(a: Tensor, b: Tensor, name: str, fn: Callable[[Array, Array], Array]) -> Array:
    """Apply ``fn`` to the arrays, turning NumPy's broadcasting error into a clear one."""
    try:
        return fn(a.data, b.data)
    except (TypeError, ValueError):
        check_same_device(name, a.data, b.data)  # raises naming both devices (CPU and GPU)
        broadcast_shapes(a.shape, b.shape, op=name)  # raises with the axes that clash
        raise


def _prod(shape: Sequence[int]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _axes(ndim: int, axis: int | tuple[int, ...] | None) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    for a in axes:
        if not -ndim <= a < max(ndim, 1):
            raise ValueError(f"axis {a} is out of range for a tensor with {ndim} axes")
    return tuple(a % ndim for a in axes) if ndim else ()


def _kept_shape(shape: tuple[int, ...], axis: Any) -> tuple[int, ...]:
    """The shape of a reduction over ``axis`` with ``keepdims=True``."""
    axes = _axes(len(shape), axis)
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def _extreme(t: Tensor, axis: Any, keepdims: bool, kind: str) -> Tensor:
    xp, shape = t._xp, t.shape
    axes = _axes(t.ndim, axis)
    if t.size == 0:
        raise ValueError(f"{kind}: cannot reduce an empty tensor of shape {shape}")
    reduce = xp.max if kind == "max" else xp.min
    y = reduce(t.data, axis=axis, keepdims=keepdims)
    kept = _kept_shape(shape, axis)
    rest = tuple(i for i in range(t.ndim) if i not in axes)
    perm = rest + axes  # the reduced axes last, then merged into one
    inverse = tuple(sorted(range(t.ndim), key=perm.__getitem__))
    moved_shape = tuple(shape[i] for i in perm)
    n = _prod(shape[i] for i in axes)

    def vjp(g: Array, x: Array) -> Array:
        flat = xp.reshape(xp.permute_dims(x, perm), tuple(shape[i] for i in rest) + (n,))
        pick = xp.argmax if kind == "max" else xp.argmin
        first = pick(flat, axis=-1, keepdims=True)  # the first extreme, as PyTorch's max(dim)
        chosen = xp.arange(n) == first
        gk = xp.reshape(xp.permute_dims(xp.reshape(g, kept), perm), tuple(shape[i] for i in rest) + (1,))
        spread = xp.where(chosen, gk, xp.zeros_like(gk))
        return xp.permute_dims(xp.reshape(spread, moved_shape), inverse)

    return op(y, (t,), vjp, saved=(t.data,), name=kind)


def _pick(a: Any, b: Any, kind: str) -> Tensor:
    a = a if isinstance(a, Tensor) else _lift(a, b)
    b = _lift(b, a)
    xp, sa, sb = a._xp, a.shape, b.shape
    fn = xp.maximum if kind == "maximum" else xp.minimum
    y = _binary(a, b, kind, fn)

    def vjp(g: Array, x: Array, w: Array) -> tuple:
        wins = (x > w) if kind == "maximum" else (x < w)
        share = xp.where(wins, g, xp.where(x == w, 0.5 * g, 0))  # a's share of g
        return unbroadcast(share, sa), unbroadcast(g - share, sb)

    return op(y, (a, b), vjp, saved=(a.data, b.data), name=kind)


def _index_for(index: Any, data: Array) -> Any:
    """Unwrap tensors, turn lists into integer arrays of ``data``'s namespace, end with ``...``."""
    items = index if isinstance(index, tuple) else (index,)
    out = []
    for i in items:
        if isinstance(i, Tensor):
            i = i.data
        elif isinstance(i, list):
            i = asarray(i, like=data)
        out.append(i)
    if all(i is None or isinstance(i, (int, slice)) for i in out):
        out.append(Ellipsis)  # the same in NumPy; the array API asks for it explicitly
    return tuple(out)
