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
import functools
import itertools
import math
import numbers
from heapq import heappop, heappush
from typing import Any, Callable, NamedTuple, Sequence

from .backend import (Array, asarray, check_same_device, device_name, is_floating, matmul_into,
                      namespace, reduce_sum, resolve_dtype, scatter_add, times_mask,
                      to_numpy)
from .broadcast import broadcast_shapes, unbroadcast

__all__ = [
    "Tensor", "tensor", "op", "no_grad", "enable_grad", "is_grad_enabled", "AxisError",
    "maximum", "minimum", "concatenate", "cat", "stack", "where",
    "exp", "log", "sqrt", "tanh", "sigmoid", "relu", "leaky_relu",
    "sin", "cos", "tan", "log1p", "expm1", "rsqrt", "sign", "floor", "ceil", "round",
    "isnan", "isinf", "clamp", "clip", "abs", "argmax", "argmin", "logsumexp", "prod",
    "cumsum", "var", "std", "tril", "triu", "gather", "masked_fill", "unsqueeze", "squeeze",
    "permute", "flatten", "transpose",
]

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
        if g is home:  # the VJP wrote it there already (gradient_product): nothing to copy
            leaf.grad = home
        elif home is not None and home.dtype == leaf.data.dtype and type(home) is type(g):
            home[...] = g  # a copy into memory the leaf owns (and the dtype is the leaf's)
            leaf.grad = home
        else:
            leaf.grad = leaf._xp.astype(g, leaf.data.dtype, copy=True)
            if not leaf.grad.shape:  # NumPy's 0-d results are immutable scalars: += below
                leaf.grad = leaf._xp.asarray(leaf.grad)  # would not change .grad; an array will
    else:
        if g.dtype != grad.dtype:
            g = leaf._xp.astype(g, grad.dtype)
        grad += g  # in place, as PyTorch: the .grad array stays the same object


def gradient_product(a: Array, b: Array, leaf: "Tensor") -> Array:
    """``a @ b``, computed in a VJP as the whole gradient of the leaf ``leaf`` (a weight's
    ``g.T @ x``): a fast path for training with a fused optimizer.

    When this product is about to become ``leaf.grad`` in the buffer its fused optimizer keeps
    for it (the leaf has no gradient yet this step), the product is written straight into that
    buffer, and :func:`_accumulate_grad` keeps it as it is: one copy of the gradient fewer, as
    the tuned NumPy loop's ``matmul(g.T, x, out=dW)``. In every other case (no such buffer, a
    gradient already there, another dtype or array library) it is the plain ``a @ b``.
    """
    if leaf.requires_grad and leaf._vjp is None and leaf.grad is None:
        home = leaf._grad_buffer
        if home is not None and home.shape == leaf.data.shape:
            try:
                into = matmul_into(a, b, home)
            except ValueError:  # a product of another shape: backward() will say so
                into = None
            if into is not None:
                return into
    return a @ b


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

    Notes
    -----
    PyTorch is the reference: where it raises, minigrad raises a clear error; where it returns
    a value (a dtype, a gradient at a tie or at 0), minigrad returns the same. Where NumPy's
    and PyTorch's rules differ:

    * **dtypes.** Python numbers, lists and integer-only inputs give float64 when a float is
      needed (NumPy's default, kept on purpose: the course compares numbers exactly; PyTorch
      would give float32). A float32 tensor stays float32 whatever number, NumPy scalar,
      integer array or 0-d float64 tensor it meets (PyTorch's rule; NumPy would give
      float64); float32 with a float64 tensor that has axes gives float64. The layers
      (``F.linear``, ``conv2d``, the recurrent layers) refuse mixed dtypes instead, as
      PyTorch does. A leaf's ``.grad`` always has the leaf's dtype.
    * **indexing** follows NumPy (PyTorch agrees on ints, slices, ``None``, ``...`` and
      integer or boolean arrays).
    * **names.** ``axis=``/``keepdims=`` and ``dim=``/``keepdim=`` are the same arguments
      (an int, a tuple or a list). ``transpose(d0, d1)`` swaps two axes (PyTorch);
      ``transpose(*all_axes)`` permutes them (NumPy); ``permute`` takes the full
      permutation. ``max``/``min`` return the values with ``axis=`` (NumPy) and
      ``(values, indices)`` with ``dim=`` (PyTorch). ``var``/``std`` take ``correction``
      (default 1, as PyTorch; NumPy's ``ddof`` default is 0).
    * **no gradient**: comparisons, ``isnan``, ``argmax``, ``//`` (PyTorch cannot
      differentiate it either). **Zero gradient**, as PyTorch: ``sign``, ``floor``, ``ceil``,
      ``round``.
    """

    __slots__ = ("data", "grad", "requires_grad", "_parents", "_vjp", "_saved", "_op",
                 "_xp", "_retains_grad", "_seq", "_grad_buffer", "__weakref__")
    __array_ufunc__ = None  # ``ndarray * Tensor`` calls Tensor.__rmul__, giving a Tensor
    data: Array
    grad: Array | None
    requires_grad: bool
    _parents: tuple["Tensor", ...]
    _vjp: VJP | None
    _saved: tuple[Any, ...]
    _op: str | None
    _xp: Any
    _retains_grad: bool
    _seq: int

    def __init__(self, data: Any, requires_grad: bool = False, dtype: Any = None) -> None:
        if isinstance(data, Tensor):
            data = data.data
        try:
            self.data = asarray(data, dtype=dtype)
        except ValueError as exc:
            if isinstance(data, (list, tuple)) and "inhomogeneous" in str(exc):
                raise ValueError(f"Tensor: the nested lists have different lengths (a ragged "
                                 f"list, {data!r:.60}); each row must have as many values as "
                                 "the others") from None
            raise
        self._xp = namespace(self.data)
        if not _is_numeric(self._xp, self.data.dtype):
            raise TypeError(f"Tensor: expected numbers (a number, a nested list of numbers or an "
                            f"array); got {type(data).__name__} {data!r:.60}, which gives dtype "
                            f"{self.data.dtype}")
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
        # Each tensor made by an operation is numbered when it is made (``_seq``), so after its
        # inputs. Running the waiting tensors newest first is therefore a topological order: a
        # VJP runs once, after every use of its tensor has sent its gradient back. ``pending``
        # maps a number to [tensor, sum of the gradients so far]; a heap of the negated numbers
        # (plain ints: cheap to compare) hands out the newest. This is faster than the one
        # topological order (graph.topological_order): no walk of the graph before the pass,
        # and only the tensors a gradient reaches are visited.
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

    def __floordiv__(self, other: Any) -> "Tensor":
        """``floor(a / b)``. No gradient: a step function (PyTorch does not differentiate it).

        Integers divided by an integer 0 raise ``ZeroDivisionError``, as PyTorch (NumPy would
        give 0); floats give ``inf`` or NaN. On a GPU the divisor is not read (that would wait
        for the device): there an integer 0 divisor gives CuPy's answer, 0."""
        a, b = _operands(self, other)
        _check_divisor(a, b, "floordiv")
        return Tensor(_binary(a, b, "floordiv", lambda x, y: x // y))

    def __rfloordiv__(self, other: Any) -> "Tensor":
        return _lift(other, self) // self

    def __mod__(self, other: Any) -> "Tensor":
        """``a - floor(a / b) * b`` (the sign of ``b``, as Python and PyTorch's ``remainder``).

        Gradient: ``g`` for ``a`` and ``-g * floor(a / b)`` for ``b``, as PyTorch. Integers
        modulo an integer 0 raise ``ZeroDivisionError``, as PyTorch (NumPy would give 0).
        """
        xp = self._xp
        c = _scalar(other)
        if c is not None:
            if c == 0 and type(c) is int and _kind(xp, self.dtype) < 2:
                raise ZeroDivisionError(f"mod: integer modulo by zero (the divisor is {other!r}); "
                                        "PyTorch raises too. Use floats for NaN")
            return op(self.data % c, (self,), lambda g: g, name="mod")
        a, b = _operands(self, other)
        _check_divisor(a, b, "mod")
        sa, sb = a.shape, b.shape
        return op(_binary(a, b, "mod", lambda x, y: x % y), (a, b),
                  lambda g, x, y: (unbroadcast(g, sa), unbroadcast(-g * xp.floor(x / y), sb)),
                  saved=(a.data, b.data), name="mod")

    def __rmod__(self, other: Any) -> "Tensor":
        return _lift(other, self) % self

    def __neg__(self) -> "Tensor":
        return op(-self.data, (self,), lambda g: -g, name="neg")

    def __pow__(self, other: Any) -> "Tensor":
        """``x ** e``. Gradients as PyTorch: ``e * x ** (e - 1)`` for ``x``, but 0 where
        ``e == 0`` (so ``x ** 0`` has gradient 0 even at ``x = 0``); ``x ** e * log(x)`` for
        ``e``, but 0 where ``x == 0`` and ``e >= 0``."""
        xp = self._xp
        p = _scalar(other)
        if p == 0:  # x ** 0 == 1 everywhere: gradient 0 (not 0 * x ** -1, NaN at 0)
            return op(self.data ** p, (self,), lambda g: xp.zeros_like(g), name="pow")
        if p is not None:  # x ** p: p * x ** (p - 1)
            return op(self.data ** p, (self,), lambda g, x: g * p * x ** (p - 1),
                      saved=(self.data,), name="pow")
        a, b = _operands(self, other)
        sa, sb = a.shape, b.shape
        y = _binary(a, b, "pow", lambda x, e: x ** e)
        # (the inner where()s only keep 0 ** -1 and log(0) from being computed where the
        # outer where() throws them away: same values, no NumPy warnings)
        if not b.requires_grad:  # only the base needs a gradient (log of x may not exist)
            return op(y, (a,), lambda g, x, e: unbroadcast(
                xp.where(e == 0, 0.0, g * e * x ** xp.where(e == 0, 1.0, e - 1)), sa),
                saved=(a.data, b.data), name="pow")
        return op(y, (a, b),  # x ** e: e * x ** (e - 1) for x, x ** e * log(x) for e
                  lambda g, x, e, y: (
                      unbroadcast(xp.where(e == 0, 0.0, g * e * x ** xp.where(e == 0, 1.0, e - 1)),
                                  sa),
                      unbroadcast(xp.where((x == 0) & (e >= 0), 0.0, g * y * xp.log(
                          xp.where((x == 0) & (e >= 0), 1.0, x))), sb)),
                  saved=(a.data, b.data, y), name="pow")

    def __radd__(self, other: Any) -> "Tensor":
        return self + other

    def __rsub__(self, other: Any) -> "Tensor":
        return -self + other if _scalar(other) is not None else _lift(other, self) - self

    def __rmul__(self, other: Any) -> "Tensor":
        return self * other

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

    # --- comparisons: no gradient, a boolean tensor --------------------------------------------

    def __lt__(self, other: Any) -> "Tensor":
        return _compare(self, other, "lt", lambda x, y: x < y)

    def __le__(self, other: Any) -> "Tensor":
        return _compare(self, other, "le", lambda x, y: x <= y)

    def __gt__(self, other: Any) -> "Tensor":
        return _compare(self, other, "gt", lambda x, y: x > y)

    def __ge__(self, other: Any) -> "Tensor":
        return _compare(self, other, "ge", lambda x, y: x >= y)

    def __eq__(self, other: Any) -> "Tensor":  # type: ignore[override]
        return _compare(self, other, "eq", lambda x, y: x == y)

    def __ne__(self, other: Any) -> "Tensor":  # type: ignore[override]
        return _compare(self, other, "ne", lambda x, y: x != y)

    # --- elementwise functions ------------------------------------------------------------------

    def exp(self) -> "Tensor":
        y = self._xp.exp(self.data)
        return op(y, (self,), lambda g, y: g * y, saved=(y,), name="exp")

    def log(self) -> "Tensor":
        return op(self._xp.log(self.data), (self,), lambda g, x: g / x,
                  saved=(self.data,), name="log")

    def log1p(self) -> "Tensor":
        """``log(1 + x)``, accurate for small ``x``; gradient ``1 / (1 + x)``."""
        return op(self._xp.log1p(self.data), (self,), lambda g, x: g / (1 + x),
                  saved=(self.data,), name="log1p")

    def expm1(self) -> "Tensor":
        """``exp(x) - 1``, accurate for small ``x``; gradient ``exp(x) = y + 1``."""
        y = self._xp.expm1(self.data)
        return op(y, (self,), lambda g, y: g * (y + 1), saved=(y,), name="expm1")

    def sqrt(self) -> "Tensor":
        y = self._xp.sqrt(self.data)
        return op(y, (self,), lambda g, y: g / (2 * y), saved=(y,), name="sqrt")

    def rsqrt(self) -> "Tensor":
        """``1 / sqrt(x)``; gradient ``-y**3 / 2``."""
        y = 1 / self._xp.sqrt(self.data)
        return op(y, (self,), lambda g, y: -0.5 * g * y * y * y, saved=(y,), name="rsqrt")

    def sin(self) -> "Tensor":
        xp = self._xp
        return op(xp.sin(self.data), (self,), lambda g, x: g * xp.cos(x),
                  saved=(self.data,), name="sin")

    def cos(self) -> "Tensor":
        xp = self._xp
        return op(xp.cos(self.data), (self,), lambda g, x: -g * xp.sin(x),
                  saved=(self.data,), name="cos")

    def tan(self) -> "Tensor":
        y = self._xp.tan(self.data)
        return op(y, (self,), lambda g, y: g * (1 + y * y), saved=(y,), name="tan")

    def tanh(self) -> "Tensor":
        y = self._xp.tanh(self.data)
        return op(y, (self,), lambda g, y: g * (1 - y * y), saved=(y,), name="tanh")

    def sigmoid(self) -> "Tensor":
        y = 0.5 * (self._xp.tanh(0.5 * self.data) + 1)  # = 1 / (1 + exp(-x)), never overflows
        return op(y, (self,), lambda g, y: g * y * (1 - y), saved=(y,), name="sigmoid")

    def relu(self) -> "Tensor":
        xp = self._xp
        y = xp.maximum(self.data, 0)  # backward: g * (y != 0); a product, faster than where()
        # (y >= 0, so y != 0 is PyTorch's "not y <= 0": the gradient passes at a NaN, too)
        return op(y, (self,), lambda g, y: times_mask(g, y != 0), saved=(y,), name="relu")

    def leaky_relu(self, slope: float = 0.01) -> "Tensor":
        if _scalar(slope) is None:
            raise TypeError(f"leaky_relu: the slope (negative_slope) must be a number; got "
                            f"{slope!r:.40}")
        xp = self._xp
        x = self.data
        return op(xp.where(x > 0, x, slope * x), (self,),
                  lambda g, x: xp.where(x > 0, g, slope * g), saved=(x,), name="leaky_relu")

    def abs(self) -> "Tensor":
        """``|x|``; gradient ``sign(x)``, so 0 at 0 and at NaN (as PyTorch)."""
        xp = self._xp
        return op(xp.abs(self.data), (self,),
                  lambda g, x: g * xp.where(xp.isnan(x), 0.0, xp.sign(x)),
                  saved=(self.data,), name="abs")

    __abs__ = abs

    def clamp(self, min: "float | Tensor | None" = None,
              max: "float | Tensor | None" = None) -> "Tensor":
        """Limit the values to ``[min, max]`` (either may be ``None``); also named ``clip``.

        The gradient passes where ``min <= x <= max`` (bounds included) and is 0 outside, as
        PyTorch. As in PyTorch, ``min > max`` gives ``max`` everywhere. The bounds are numbers,
        or tensors that broadcast with ``x``; a tensor bound gets the gradient where it is the
        result (``min`` where ``x < min <= max``, ``max`` where ``max(x, min) > max``), the
        same split as PyTorch's.
        """
        if min is None and max is None:
            raise ValueError("clamp: give at least one of min and max; got neither")
        if isinstance(min, Tensor) or isinstance(max, Tensor):
            broadcast_shapes(self.shape, *[b.shape for b in (min, max) if isinstance(b, Tensor)],
                             op="clamp (x, min and max)")  # a bound of the wrong shape: say so
            # clamp = min(max(x, lo), hi), each step a where() whose ties go to x
            y = self if min is None else where(self.data >= _raw(min), self, min)
            return y if max is None else where(y.data > _raw(max), max, y)
        for name, bound in (("min", min), ("max", max)):
            if bound is not None and _scalar(bound) is None:
                raise TypeError(f"clamp: {name} must be a number, a tensor or None; got "
                                f"{type(bound).__name__}")
        xp, x = self._xp, self.data
        if max is not None and min is not None and min > max:
            y = xp.full_like(x, max)
        else:
            y = xp.clip(x, min, max)
        lo = float("-inf") if min is None else min
        hi = float("inf") if max is None else max
        return op(y, (self,), lambda g, x: times_mask(g, (x >= lo) & (x <= hi)),
                  saved=(x,), name="clamp")

    clip = clamp

    # Step functions: their derivative is 0 wherever it exists; PyTorch gives a zero gradient.

    def sign(self) -> "Tensor":
        """-1, 0 or 1, and 0 for NaN (as PyTorch; NumPy gives NaN). Gradient 0 everywhere."""
        xp, x = self._xp, self.data
        y = xp.sign(x)
        if is_floating(xp, x.dtype):
            y = xp.where(xp.isnan(x), xp.zeros_like(y), y)
        return _step(self, y, "sign")

    def floor(self) -> "Tensor":
        """Round down. Gradient 0 everywhere (as PyTorch)."""
        return _step(self, self._xp.floor(self.data), "floor")

    def ceil(self) -> "Tensor":
        """Round up. Gradient 0 everywhere (as PyTorch)."""
        return _step(self, self._xp.ceil(self.data), "ceil")

    def round(self, decimals: int = 0) -> "Tensor":
        """Round half to even (as NumPy and PyTorch), to ``decimals`` places (an int; negative
        rounds to tens, hundreds, ...). Gradient 0."""
        if not isinstance(decimals, numbers.Integral) or isinstance(decimals, bool):
            raise TypeError(f"round: decimals must be an int; got {decimals!r}")
        xp, x = self._xp, self.data
        if decimals and not is_floating(xp, x.dtype):
            raise TypeError(f"round: decimals={decimals} needs a floating-point tensor; got dtype "
                            f"{x.dtype} (PyTorch does not implement it either)")
        if decimals == 0:
            return _step(self, xp.round(x), "round")
        scale = 10.0 ** decimals
        return _step(self, xp.round(x * scale) / scale, "round")

    def isnan(self) -> "Tensor":
        """A boolean tensor, True where the value is NaN (no gradient)."""
        return Tensor(self._xp.isnan(self.data))

    def isinf(self) -> "Tensor":
        """A boolean tensor, True where the value is +inf or -inf (no gradient)."""
        return Tensor(self._xp.isinf(self.data))

    # --- reductions -----------------------------------------------------------------------------
    # ``axis`` (NumPy) and ``dim`` (PyTorch) are the same argument: an int, a tuple or a list
    # of ints, or None for all axes; ``keepdims`` and ``keepdim`` likewise.

    def sum(self, axis: Axis = None, keepdims: bool = False, *, dim: Axis = None,
            keepdim: bool | None = None) -> "Tensor":
        """Sum over ``axis`` (all axes by default); each input gets the output's gradient."""
        axis, keepdims = _reduce_args(axis, dim, keepdims, keepdim)
        xp, shape = self._xp, self.shape
        axes = _axes(self.ndim, axis)
        kept = tuple(1 if i in axes else n for i, n in enumerate(shape))
        return op(reduce_sum(self.data, axis=axes, keepdims=keepdims), (self,),
                  lambda g: xp.broadcast_to(xp.reshape(g, kept), shape), name="sum")

    def mean(self, axis: Axis = None, keepdims: bool = False, *, dim: Axis = None,
             keepdim: bool | None = None) -> "Tensor":
        """Mean over ``axis``: a sum divided by the number of values averaged (NaN if none)."""
        axis, keepdims = _reduce_args(axis, dim, keepdims, keepdim)
        count = math.prod(self.shape[i] for i in _axes(self.ndim, axis))
        total = self.sum(axis=axis, keepdims=keepdims)
        return total / count if count else total * float("nan")

    def var(self, axis: Axis = None, *, correction: float = 1, keepdims: bool = False,
            dim: Axis = None, keepdim: bool | None = None) -> "Tensor":
        """Variance ``sum((x - mean)**2) / (N - correction)`` over ``axis``.

        ``correction=1`` (the default, as PyTorch) is the unbiased estimate; ``correction=0``
        is NumPy's default ``var``. Gradient: ``2 * (x - mean) / (N - correction)``.
        """
        axis, keepdims = _reduce_args(axis, dim, keepdims, keepdim)
        xp, kept, axes = self._xp, _kept_shape(self.shape, axis), _axes(self.ndim, axis)
        d, denom = _deviations(self, axes, correction)
        y = xp.sum(d * d, axis=axes, keepdims=keepdims) / denom
        return op(y, (self,), lambda g, d: xp.reshape(g, kept) * (2 * d / denom),
                  saved=(d,), name="var")

    def std(self, axis: Axis = None, *, correction: float = 1, keepdims: bool = False,
            dim: Axis = None, keepdim: bool | None = None) -> "Tensor":
        """Standard deviation ``sqrt(var)`` (``correction=1`` by default, as PyTorch).

        Gradient: ``(x - mean) / ((N - correction) * std)``, and 0 where ``std`` is 0 (all
        values equal), as PyTorch.
        """
        axis, keepdims = _reduce_args(axis, dim, keepdims, keepdim)
        xp, kept, axes = self._xp, _kept_shape(self.shape, axis), _axes(self.ndim, axis)
        d, denom = _deviations(self, axes, correction)
        sk = xp.sqrt(xp.sum(d * d, axis=axes, keepdims=True) / denom)  # std, axes kept
        y = sk if keepdims else xp.reshape(sk, _reduced_shape(self.shape, axes))
        safe = xp.where(sk == 0, 1.0, sk)
        return op(y, (self,), lambda g, d, sk, safe: xp.where(
            sk == 0, 0.0, xp.reshape(g, kept) / safe) * d / denom,
            saved=(d, sk, safe), name="std")

    def logsumexp(self, axis: Axis = None, keepdims: bool = False, *, dim: Axis = None,
                  keepdim: bool | None = None) -> "Tensor":
        """``log(sum(exp(x)))`` over ``axis``, shifted by the max so that nothing overflows.

        Gradient: ``exp(x - logsumexp(x))``, the softmax. Rows of ``-inf`` give ``-inf``, and
        so does an empty group (as PyTorch).
        """
        axis, keepdims = _reduce_args(axis, dim, keepdims, keepdim)
        xp, x, shape = self._xp, self.data, self.shape
        kept = _kept_shape(shape, axis)
        axes = _axes(self.ndim, axis)
        if math.prod(shape[i] for i in axes) == 0:  # a sum of no terms is 0: log(0) = -inf
            y = xp.full(kept if keepdims else _reduced_shape(shape, axes), float("-inf"),
                        dtype=x.dtype)
            return op(y, (self,), lambda g: xp.zeros(shape, dtype=g.dtype), name="logsumexp")
        m = xp.max(x, axis=axes, keepdims=True)
        m = xp.where(xp.isinf(m), 0.0, m)  # a row of -inf: no shift (keeps -inf - -inf away)
        y_kept = m + xp.log(xp.sum(xp.exp(x - m), axis=axes, keepdims=True))
        y = y_kept if keepdims else xp.reshape(y_kept, _reduced_shape(shape, axes))
        return op(y, (self,), lambda g, x, yk: xp.reshape(g, kept) * xp.exp(x - yk),
                  saved=(x, y_kept), name="logsumexp")

    def prod(self, axis: Axis = None, keepdims: bool = False, *, dim: Axis = None,
             keepdim: bool | None = None) -> "Tensor":
        """Product over ``axis``. Gradient: the product of the *other* values of the group.

        That is computed from running products from the left and from the right, never as
        ``prod / x``, so zeros are handled exactly (as PyTorch).
        """
        axis, keepdims = _reduce_args(axis, dim, keepdims, keepdim)
        xp, shape = self._xp, self.shape
        kept = _kept_shape(shape, axis)
        axes = _axes(self.ndim, axis)
        return op(xp.prod(self.data, axis=axes, keepdims=keepdims), (self,),
                  lambda g, x: xp.reshape(g, kept) * _product_of_others(xp, x, axes),
                  saved=(self.data,), name="prod")

    def cumsum(self, axis: int | None = None, *, dim: int | None = None) -> "Tensor":
        """Running sum along ``axis`` (required, as PyTorch's ``dim``; a 0-d or 1-d tensor
        may leave it out). Gradient: the running sum of ``g`` from the other end."""
        axis, _ = _reduce_args(axis, dim, False, None)
        if axis is None:
            if self.ndim > 1:
                raise TypeError(f"cumsum: give the axis (dim=) to sum along; the tensor has "
                                f"shape {self.shape}")
            axis = 0
        xp = self._xp
        if self.ndim == 0:
            _axis_index(0, axis, "cumsum")  # 0 or -1, as PyTorch
            return op(xp.reshape(self.data, ()), (self,), lambda g: g, name="cumsum")
        a = _axis_index(self.ndim, axis, "cumsum")  # one int axis, as PyTorch's dim
        return op(xp.cumulative_sum(self.data, axis=a), (self,),
                  lambda g: xp.flip(xp.cumulative_sum(xp.flip(g, axis=a), axis=a), axis=a),
                  name="cumsum")

    def max(self, axis: Axis = None, keepdims: bool = False, *, dim: int | None = None,
            keepdim: bool | None = None) -> Any:
        """Largest value, over all axes or over ``axis``; or ``(values, indices)`` with ``dim=``.

        The two names give the two libraries' answers (positional arguments are ``axis``):

        * ``x.max()`` and ``x.max(axis=...)`` return the values, as NumPy's ``max`` (and
          PyTorch's ``x.max()`` and ``amax``). When several values tie for the maximum, the
          gradient is split evenly among them, as PyTorch does for these.
        * ``x.max(dim=d)`` returns the pair ``(values, indices)``, as PyTorch's
          ``x.max(dim=d)``; the gradient goes to the index returned (the first maximum).
        """
        if dim is not None:
            _reduce_args(axis, dim, keepdims, keepdim)  # axis= and dim= together: an error
            return _extreme_with_index(self, dim, bool(keepdim) or keepdims, "max")
        axis, keepdims = _reduce_args(axis, None, keepdims, keepdim)
        return _extreme(self, axis, keepdims, "max")

    def min(self, axis: Axis = None, keepdims: bool = False, *, dim: int | None = None,
            keepdim: bool | None = None) -> Any:
        """Smallest value; ``(values, indices)`` with ``dim=``. See :meth:`max` for the rules."""
        if dim is not None:
            _reduce_args(axis, dim, keepdims, keepdim)
            return _extreme_with_index(self, dim, bool(keepdim) or keepdims, "min")
        axis, keepdims = _reduce_args(axis, None, keepdims, keepdim)
        return _extreme(self, axis, keepdims, "min")

    def argmax(self, axis: int | None = None, keepdims: bool = False, *, dim: int | None = None,
               keepdim: bool | None = None) -> "Tensor":
        """Index of the (first) largest value, of the flattened tensor by default. No gradient."""
        return _arg_extreme(self, axis, dim, keepdims, keepdim, "argmax")

    def argmin(self, axis: int | None = None, keepdims: bool = False, *, dim: int | None = None,
               keepdim: bool | None = None) -> "Tensor":
        """Index of the (first) smallest value, of the flattened tensor by default. No gradient."""
        return _arg_extreme(self, axis, dim, keepdims, keepdim, "argmin")

    # --- shape ----------------------------------------------------------------------------------

    def reshape(self, *shape: Any) -> "Tensor":
        """The same values in a new shape; the gradient is reshaped back."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        try:  # NumPy takes -2 as -1: a size below -1, or two -1s, is named here (as PyTorch)
            suspect = min(shape, default=0) < -1 or shape.count(-1) > 1
        except TypeError:
            suspect = True
        if suspect:
            shape = _check_shape(shape, "reshape")
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

    def view(self, *shape: Any) -> "Tensor":
        """PyTorch's name for :meth:`reshape`. (Here it may copy; nothing shares memory.)"""
        return self.reshape(*shape)

    def transpose(self, *axes: int) -> "Tensor":
        """Swap two axes (PyTorch), or permute all of them (NumPy); reverse them by default.

        ``x.transpose(0, 2)`` -- two separate ints -- swaps axes 0 and 2 of a tensor of any
        number of axes, as ``torch.transpose`` (so ``m.transpose(0, 1)`` of a matrix is its
        transpose, as in PyTorch, not NumPy's identity permutation). ``x.transpose(2, 0, 1)``
        or ``x.transpose((1, 0))`` (one tuple, or as many ints as the tensor has axes, more
        than two) is a full permutation, as ``numpy.transpose``. Axes out of range are an
        error. The gradient is permuted back.
        """
        as_tuple = False
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes, as_tuple = tuple(axes[0]), True
        n = self.ndim
        if not axes:
            return self.permute(tuple(range(n))[::-1])
        if len(axes) == 2 and not as_tuple:  # PyTorch: swap two axes
            a, b = (_axis_index(n, d, "transpose") for d in axes)
            swapped = list(range(n))
            swapped[a], swapped[b] = b, a
            return self.permute(swapped)
        if len(axes) != n:
            raise ValueError(f"transpose: expected two axes to swap or a permutation of all "
                             f"{n} axes of shape {self.shape}; got {axes}")
        order = tuple(_axis_index(n, d, "transpose") for d in axes)
        if sorted(order) != list(range(n)):
            raise ValueError(f"transpose: {axes} is not a permutation of the {n} axes of shape "
                             f"{self.shape}")
        return self.permute(order)

    def permute(self, *dims: Any) -> "Tensor":
        """Reorder the axes: axis ``i`` of the result is axis ``dims[i]`` of this tensor.

        ``dims`` must name every axis once (as ``torch.permute``). The gradient is permuted
        back by the inverse permutation.
        """
        if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
            dims = tuple(dims[0])
        n = self.ndim
        order = tuple(_axis_index(n, d, "permute") for d in dims)
        if sorted(order) != list(range(n)):
            raise ValueError(f"permute: {tuple(dims)} is not a permutation of the {n} axes of "
                             f"shape {self.shape}")
        xp = self._xp
        inverse = tuple(sorted(range(n), key=order.__getitem__))
        return op(xp.permute_dims(self.data, order), (self,),
                  lambda g: xp.permute_dims(g, inverse), name="transpose")

    @property
    def T(self) -> "Tensor":
        """All axes reversed (the transpose of a matrix)."""
        return self.transpose()

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> "Tensor":
        """Merge axes ``start_dim`` to ``end_dim`` into one (all of them by default).

        Axes out of range, or ``start_dim`` after ``end_dim``, are an error; a 0-d tensor
        becomes shape ``(1,)``, as in PyTorch.
        """
        shape = self.shape
        start = _axis_index(self.ndim, start_dim, "flatten")
        end = _axis_index(self.ndim, end_dim, "flatten")
        if start > end:
            raise ValueError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim} "
                             f"for shape {shape}")
        if not shape:
            return self.reshape((1,))
        return self.reshape(shape[:start] + (math.prod(shape[start:end + 1]),) + shape[end + 1:])

    def unsqueeze(self, dim: int) -> "Tensor":
        """Insert an axis of size 1 at position ``dim`` (from ``-ndim - 1`` to ``ndim``)."""
        n = self.ndim
        if not isinstance(dim, int) or isinstance(dim, bool) or not -n - 1 <= dim <= n:
            raise AxisError(f"unsqueeze: dim must be an int from {-n - 1} to {n} for shape "
                            f"{self.shape}; got {dim!r}")
        d = dim % (n + 1)
        return self.reshape(self.shape[:d] + (1,) + self.shape[d:])

    def squeeze(self, dim: Axis = None) -> "Tensor":
        """Remove axes of size 1: all of them, or those of ``dim`` (an int or a tuple).

        As PyTorch (and unlike NumPy), naming an axis whose size is not 1 leaves it alone.
        """
        axes = _axes(self.ndim, tuple(dim) if isinstance(dim, list) else dim, "squeeze")
        return self.reshape(tuple(n for i, n in enumerate(self.shape)
                                  if not (i in axes and n == 1)))

    def expand(self, *sizes: int) -> "Tensor":
        """Broadcast to ``sizes`` without copying (``-1`` keeps an axis); gradient: summed back.

        New axes go in front; an existing axis can only grow from size 1, as PyTorch.
        """
        if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
            sizes = tuple(sizes[0])
        for k, n in enumerate(sizes):
            if not isinstance(n, numbers.Integral) or isinstance(n, bool):
                raise TypeError(f"expand: sizes must be ints; got {n!r} at index {k} of {sizes}")
        shape, lead = self.shape, len(sizes) - self.ndim
        if lead < 0:
            raise ValueError(f"expand: {tuple(sizes)} has fewer axes than the tensor's shape "
                             f"{shape}")
        target = tuple(shape[i - lead] if i >= lead and n == -1 else n
                       for i, n in enumerate(sizes))
        for i, n in enumerate(shape):
            if n != 1 and n != target[lead + i] or target[lead + i] < 0 or \
                    any(m < 0 for m in target[:lead]):
                raise ValueError(f"expand: cannot expand shape {shape} to {tuple(sizes)}: axis "
                                 f"{lead + i} has size {n}, which only grows from 1")
        xp = self._xp
        return op(xp.broadcast_to(self.data, target), (self,),
                  lambda g: unbroadcast(g, shape), name="expand")

    def __getitem__(self, index: Any) -> "Tensor":
        """Index like NumPy; the gradient is added back at the positions read (repeats add).

        Indexing keeps NumPy's rules on purpose (PyTorch's agree for ints, slices, ``None``,
        ``...``, integer and boolean arrays).
        """
        xp, shape, dtype = self._xp, self.shape, self.dtype
        index = _index_for(index, self.data)
        return op(self.data[index], (self,),
                  lambda g: scatter_add(xp, shape, dtype, index, g), name="index")

    # --- selecting and filling ------------------------------------------------------------------

    def masked_fill(self, mask: Any, value: float) -> "Tensor":
        """``value`` where ``mask`` is True, else the tensor's value. Gradient: 0 where filled.

        ``mask`` is a boolean tensor or array that broadcasts to this tensor's shape (a list
        is refused, as in PyTorch). ``value`` is a number, or a 0-d tensor (which gets the
        gradient of the filled places, as in PyTorch); the result keeps this tensor's dtype.
        """
        xp, x = self._xp, self.data
        m = _raw(mask)
        if not hasattr(m, "dtype") or not hasattr(m, "shape"):
            raise TypeError(f"masked_fill: mask must be a boolean tensor or array; got a "
                            f"{type(m).__name__}. Wrap it: minigrad.tensor(mask)")
        if not xp.isdtype(m.dtype, "bool"):
            raise TypeError(f"masked_fill: mask must be boolean; got dtype {m.dtype}")
        if broadcast_shapes(tuple(m.shape), self.shape, op="masked_fill") != self.shape:
            raise ValueError(f"masked_fill: mask of shape {tuple(m.shape)} does not broadcast "
                             f"to the tensor's shape {self.shape}")
        if isinstance(value, Tensor):
            if value.ndim:
                raise ValueError(f"masked_fill: a tensor value must be 0-d (one number); got "
                                 f"shape {value.shape}")
            return where(m, value if value.dtype == x.dtype else value.astype(x.dtype), self)
        c = _scalar(value)
        if c is None:
            raise TypeError(f"masked_fill: value must be a number; got {type(value).__name__}")
        return op(xp.where(m, xp.asarray(c, dtype=x.dtype), x), (self,),
                  lambda g: xp.where(m, xp.zeros_like(g), g), name="masked_fill")

    def tril(self, diagonal: int = 0) -> "Tensor":
        """The lower triangle of the last two axes (above ``diagonal`` set to 0)."""
        xp = self._xp
        _need_matrix(self, "tril", diagonal)
        return op(xp.tril(self.data, k=diagonal), (self,), lambda g: xp.tril(g, k=diagonal),
                  name="tril")

    def triu(self, diagonal: int = 0) -> "Tensor":
        """The upper triangle of the last two axes (below ``diagonal`` set to 0)."""
        xp = self._xp
        _need_matrix(self, "triu", diagonal)
        return op(xp.triu(self.data, k=diagonal), (self,), lambda g: xp.triu(g, k=diagonal),
                  name="triu")

    def gather(self, dim: int, index: Any) -> "Tensor":
        """Pick values along ``dim`` at ``index``, as ``torch.gather``.

        For ``dim=1``: ``out[i, j] = x[i, index[i, j]]``. ``index`` is an integer tensor with
        as many axes as ``x``; along the other axes it may be shorter than ``x``. Gradient:
        each picked value's gradient is added back where it was picked (repeats add up).
        """
        xp, x = self._xp, self.data
        idx = _raw(index)
        if isinstance(idx, list):
            idx = asarray(idx, like=x)
        if not xp.isdtype(idx.dtype, "integral"):
            raise TypeError(f"gather: index must hold integers; got dtype {idx.dtype}")
        if idx.ndim != self.ndim:
            raise ValueError(f"gather: index has {idx.ndim} axes but the tensor has "
                             f"{self.ndim} (shape {self.shape}); they must have as many")
        d = _axis_index(self.ndim, dim, "gather")
        n = self.shape[d]
        for i, (k, m) in enumerate(zip(idx.shape, self.shape)):
            if i != d and k > m:
                raise ValueError(f"gather: index of shape {tuple(idx.shape)} is larger than "
                                 f"the tensor's shape {self.shape} along axis {i}")
        if _host_values(idx) and idx.size and bool(xp.any((idx < 0) | (idx >= n))):
            raise IndexError(f"gather: index values must be in 0..{n - 1} along axis {d} "
                             f"(size {n}); got values from {int(xp.min(idx))} to "
                             f"{int(xp.max(idx))}")
        part = tuple(slice(None) if i == d else slice(0, k) for i, k in enumerate(idx.shape))
        shape, dtype = self.shape, self.dtype
        return op(xp.take_along_axis(x[part], idx, axis=d), (self,),
                  lambda g: _scatter_along(xp, g, idx, d, part, shape, dtype), name="gather")


Axis = Any  # int, tuple or list of ints, or None


class MaxMin(NamedTuple):
    """What ``max(dim=...)`` and ``min(dim=...)`` return, as PyTorch: values and indices."""

    values: Tensor
    indices: Tensor


class AxisError(ValueError, IndexError):
    """An axis out of range. Both a ValueError (as NumPy) and an IndexError (as PyTorch)."""


# ---------------------------------------------------------------------------------------------
# Operations on several tensors


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


def maximum(a: Any, b: Any) -> Tensor:
    """Elementwise larger of ``a`` and ``b``; at ties each gets half the gradient (as PyTorch).

    At least one of them must be a tensor; the other may be a number or an array.
    """
    return _pick(a, b, "maximum")


def minimum(a: Any, b: Any) -> Tensor:
    """Elementwise smaller of ``a`` and ``b``; at ties each gets half the gradient."""
    return _pick(a, b, "minimum")


def where(condition: Any, a: Any, b: Any) -> Tensor:
    """``a`` where ``condition`` holds, else ``b``; each gets the gradient where it was chosen.

    ``a`` and ``b`` may be tensors, arrays or numbers (``where(mask, 1.0, 0.0)`` is a tensor,
    float64 by default, as for every Python float here).
    """
    cond = _raw(condition)
    if isinstance(cond, (list, bool)):
        cond = asarray(cond)
    if not hasattr(cond, "dtype") or not namespace(cond).isdtype(cond.dtype, "bool"):
        raise TypeError(f"where: condition must be a boolean tensor or array; got "
                        f"{getattr(cond, 'dtype', type(cond).__name__)}")
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        a = Tensor(asarray(a, like=cond))
    a, b = _operands(a, b, "where")
    xp = a._xp
    sa, sb = a.shape, b.shape
    try:
        y = xp.where(cond, a.data, b.data)
    except (TypeError, ValueError):
        check_same_device("where", a.data, b.data)
        broadcast_shapes(tuple(cond.shape), sa, sb, op="where (condition, a and b)")
        raise
    return op(y, (a, b),
              lambda g: (unbroadcast(xp.where(cond, g, 0), sa),
                         unbroadcast(xp.where(cond, 0, g), sb)), name="where")


def concatenate(tensors: Sequence[Tensor], axis: int | None = None, *,
                dim: int | None = None) -> Tensor:
    """Join tensors along an existing axis; each gets back its own slice of the gradient.

    ``cat`` is the same function under PyTorch's name (``dim=`` is ``axis=``). Tensors of
    different dtypes are first converted to the common one.
    """
    axis, _ = _reduce_args(axis, dim, False, None)
    axis = 0 if axis is None else axis
    tensors = _same_dtype(_sequence_of_tensors(tensors, "concatenate"), "concatenate")
    xp = tensors[0]._xp
    if not tensors[0].ndim:
        raise ValueError("concatenate: 0-d tensors have no axis to join along; use stack, or "
                         "reshape them to (1,) first")
    ax = _axis_index(tensors[0].ndim, axis, "concatenate")
    for t in tensors[1:]:
        if t.ndim != tensors[0].ndim or t.shape[:ax] + t.shape[ax + 1:] != \
                tensors[0].shape[:ax] + tensors[0].shape[ax + 1:]:
            raise ValueError(f"concatenate: shapes {tensors[0].shape} and {t.shape} differ "
                             f"outside axis {ax}")
    y = xp.concat([t.data for t in tensors], axis=ax)
    bounds = [0]
    for t in tensors:
        bounds.append(bounds[-1] + t.shape[ax])
    before = (slice(None),) * ax

    def vjp(g: Array) -> tuple[Any, ...]:
        return tuple(g[before + (slice(lo, hi), ...)] for lo, hi in zip(bounds, bounds[1:]))

    return op(y, tensors, vjp, name="concatenate")


cat = concatenate


def stack(tensors: Sequence[Tensor], axis: int | None = None, *,
          dim: int | None = None) -> Tensor:
    """Join same-shaped tensors along a new axis; each gets back its own slice of the gradient."""
    axis, _ = _reduce_args(axis, dim, False, None)
    axis = 0 if axis is None else axis
    tensors = _same_dtype(_sequence_of_tensors(tensors, "stack"), "stack")
    xp = tensors[0]._xp
    for k, t in enumerate(tensors[1:], start=1):
        if t.shape != tensors[0].shape:
            raise ValueError(f"stack: expected tensors of one shape; got {tensors[0].shape} "
                             f"(tensor 0) and {t.shape} (tensor {k})")
    axis = _axis_index(tensors[0].ndim + 1, axis, "stack")
    y = xp.stack([t.data for t in tensors], axis=axis)
    before = (slice(None),) * (axis % y.ndim)
    return op(y, tensors, lambda g: tuple(g[before + (i, ...)] for i in range(len(tensors))),
              name="stack")


def tensor(data: Any, requires_grad: bool = False, dtype: Any = None,
           device: str | None = None) -> Tensor:
    """Make a tensor, as ``torch.tensor``: ``tensor([1.0, 2.0], requires_grad=True)``.

    ``data`` is a number, a nested list of numbers or an array. Python floats give float64
    (NumPy's default, kept on purpose), ints give int64; strings, ``None`` and other objects
    are refused.
    """
    t = Tensor(data, requires_grad=requires_grad, dtype=dtype)
    return t.to(device) if device is not None else t


# The methods as functions, ``mg.exp(x)`` for ``x.exp()``. Each checks that ``x`` is a Tensor
# (as PyTorch does): an array or a list gets a TypeError that says how to wrap it.

def _tensor_arg(x: Any, name: str) -> Tensor:
    """``x`` itself if it is a Tensor; else a TypeError naming the function and what came."""
    if isinstance(x, Tensor):
        return x
    raise TypeError(f"{name}: expected a Tensor; got {type(x).__module__}.{type(x).__name__}. "
                    f"Wrap it first: minigrad.tensor(x)")


def exp(x: Tensor) -> Tensor:
    return _tensor_arg(x, "exp").exp()


def log(x: Tensor) -> Tensor:
    return _tensor_arg(x, "log").log()


def sqrt(x: Tensor) -> Tensor:
    return _tensor_arg(x, "sqrt").sqrt()


def tanh(x: Tensor) -> Tensor:
    return _tensor_arg(x, "tanh").tanh()


def sigmoid(x: Tensor) -> Tensor:
    return _tensor_arg(x, "sigmoid").sigmoid()


def relu(x: Tensor) -> Tensor:
    return _tensor_arg(x, "relu").relu()


def leaky_relu(x: Tensor, slope: float = 0.01) -> Tensor:
    return _tensor_arg(x, "leaky_relu").leaky_relu(slope)


def sin(x: Tensor) -> Tensor:
    return _tensor_arg(x, "sin").sin()


def cos(x: Tensor) -> Tensor:
    return _tensor_arg(x, "cos").cos()


def tan(x: Tensor) -> Tensor:
    return _tensor_arg(x, "tan").tan()


def log1p(x: Tensor) -> Tensor:
    return _tensor_arg(x, "log1p").log1p()


def expm1(x: Tensor) -> Tensor:
    return _tensor_arg(x, "expm1").expm1()


def rsqrt(x: Tensor) -> Tensor:
    return _tensor_arg(x, "rsqrt").rsqrt()


def sign(x: Tensor) -> Tensor:
    return _tensor_arg(x, "sign").sign()


def floor(x: Tensor) -> Tensor:
    return _tensor_arg(x, "floor").floor()


def ceil(x: Tensor) -> Tensor:
    return _tensor_arg(x, "ceil").ceil()


def round(x: Tensor, decimals: int = 0) -> Tensor:  # noqa: A001 - PyTorch's name
    return _tensor_arg(x, "round").round(decimals)


def isnan(x: Tensor) -> Tensor:
    return _tensor_arg(x, "isnan").isnan()


def isinf(x: Tensor) -> Tensor:
    return _tensor_arg(x, "isinf").isinf()


def abs(x: Tensor) -> Tensor:  # noqa: A001 - PyTorch's name
    return _tensor_arg(x, "abs").abs()


def clamp(x: Tensor, min: float | Tensor | None = None,  # noqa: A002 - PyTorch's names
          max: float | Tensor | None = None) -> Tensor:  # noqa: A002
    return _tensor_arg(x, "clamp").clamp(min, max)


clip = clamp


def argmax(x: Tensor, axis: int | None = None, keepdims: bool = False, *,
           dim: int | None = None, keepdim: bool | None = None) -> Tensor:
    return _tensor_arg(x, "argmax").argmax(axis, keepdims, dim=dim, keepdim=keepdim)


def argmin(x: Tensor, axis: int | None = None, keepdims: bool = False, *,
           dim: int | None = None, keepdim: bool | None = None) -> Tensor:
    return _tensor_arg(x, "argmin").argmin(axis, keepdims, dim=dim, keepdim=keepdim)


def logsumexp(x: Tensor, axis: Any = None, keepdims: bool = False, *, dim: Any = None,
              keepdim: bool | None = None) -> Tensor:
    return _tensor_arg(x, "logsumexp").logsumexp(axis, keepdims, dim=dim, keepdim=keepdim)


def prod(x: Tensor, axis: Any = None, keepdims: bool = False, *, dim: Any = None,
         keepdim: bool | None = None) -> Tensor:
    return _tensor_arg(x, "prod").prod(axis, keepdims, dim=dim, keepdim=keepdim)


def cumsum(x: Tensor, axis: int | None = None, *, dim: int | None = None) -> Tensor:
    return _tensor_arg(x, "cumsum").cumsum(axis, dim=dim)


def var(x: Tensor, axis: Any = None, *, correction: float = 1, keepdims: bool = False,
        dim: Any = None, keepdim: bool | None = None) -> Tensor:
    return _tensor_arg(x, "var").var(axis, correction=correction, keepdims=keepdims, dim=dim,
                                     keepdim=keepdim)


def std(x: Tensor, axis: Any = None, *, correction: float = 1, keepdims: bool = False,
        dim: Any = None, keepdim: bool | None = None) -> Tensor:
    return _tensor_arg(x, "std").std(axis, correction=correction, keepdims=keepdims, dim=dim,
                                     keepdim=keepdim)


def tril(x: Tensor, diagonal: int = 0) -> Tensor:
    return _tensor_arg(x, "tril").tril(diagonal)


def triu(x: Tensor, diagonal: int = 0) -> Tensor:
    return _tensor_arg(x, "triu").triu(diagonal)


def gather(x: Tensor, dim: int, index: Any) -> Tensor:
    return _tensor_arg(x, "gather").gather(dim, index)


def masked_fill(x: Tensor, mask: Any, value: float) -> Tensor:
    return _tensor_arg(x, "masked_fill").masked_fill(mask, value)


def unsqueeze(x: Tensor, dim: int) -> Tensor:
    return _tensor_arg(x, "unsqueeze").unsqueeze(dim)


def squeeze(x: Tensor, dim: Any = None) -> Tensor:
    return _tensor_arg(x, "squeeze").squeeze(dim)


def permute(x: Tensor, *dims: int) -> Tensor:
    return _tensor_arg(x, "permute").permute(*dims)


def transpose(x: Tensor, *axes: int) -> Tensor:
    return _tensor_arg(x, "transpose").transpose(*axes)


def flatten(x: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    return _tensor_arg(x, "flatten").flatten(start_dim, end_dim)


# ---------------------------------------------------------------------------------------------
# Helpers


def _scalar(x: Any) -> Any:
    """``x`` as a Python number if it is a number (NumPy scalars included), else None.

    A NumPy scalar such as ``np.float64(2)`` becomes the Python float 2.0, so that it does not
    turn a float32 tensor into float64 (PyTorch's rule: a number never sets the dtype of a
    tensor of the same kind).
    """
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


_KIND = {"bool": 0, "integral": 1, "real floating": 2}


@functools.lru_cache(maxsize=None)
def _kind(xp: Any, dtype: Any) -> int:
    """0 for bool, 1 for integers, 2 for floats: the order of PyTorch's promotion categories."""
    for name, rank in _KIND.items():
        if xp.isdtype(dtype, name):
            return rank
    return 3


def _common(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    """Give two tensors one dtype, by PyTorch's rule.

    * a float beats an integer or a bool, whatever their sizes: float32 with int64 stays
      float32 (NumPy would give float64);
    * within one kind, a tensor with axes beats a 0-d one: float32 (N,) with float64 () is
      float32;
    * otherwise the larger dtype wins (float32 with float64 is float64).

    A tensor converted on the way is converted by a differentiable ``astype``, so its gradient
    comes back in its own dtype.
    """
    da, db = a.data.dtype, b.data.dtype
    if da == db:
        return a, b
    xp = a._xp
    ka, kb = _kind(xp, da), _kind(xp, db)
    if ka != kb:
        target = da if ka > kb else db
    elif (a.ndim == 0) != (b.ndim == 0):
        target = db if a.ndim == 0 else da
    else:
        target = xp.result_type(da, db)
    return (a if da == target else a.astype(target)), (b if db == target else b.astype(target))


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


def _sequence_of_tensors(tensors: Any, name: str) -> list[Tensor]:
    """The tensors of ``cat``/``stack``'s first argument, a list or tuple (arrays are wrapped).

    A single tensor or array is refused, as in PyTorch: iterating over it would join its rows
    and give a wrong answer without a word."""
    if isinstance(tensors, Tensor) or hasattr(tensors, "shape") or not hasattr(tensors, "__iter__"):
        raise TypeError(f"{name}: expected a list or tuple of tensors; got a "
                        f"{type(tensors).__name__}. Pass [a, b, ...]")
    return [t if isinstance(t, Tensor) else Tensor(t) for t in tensors]


def _same_dtype(tensors: list[Tensor], name: str) -> list[Tensor]:
    """Convert tensors to their common dtype (for concatenate and stack)."""
    if not tensors:
        raise ValueError(f"{name}: expected at least one tensor; got none")
    first = tensors[0]
    if all(t.dtype == first.dtype for t in tensors):
        return tensors
    target = first._xp.result_type(*[t.data for t in tensors])
    return [t if t.dtype == target else t.astype(target) for t in tensors]


@functools.lru_cache(maxsize=None)
def _is_numeric(xp: Any, dtype: Any) -> bool:
    try:
        return bool(xp.isdtype(dtype, ("bool", "numeric")))
    except (TypeError, ValueError):
        return False


def _step(t: Tensor, y: Array, name: str) -> Tensor:
    """The output of a step function (sign, floor, ...): its gradient is 0, as PyTorch."""
    if not is_floating(t._xp, t.dtype):
        return Tensor(y)
    xp = t._xp
    return op(y, (t,), lambda g: xp.zeros_like(g), name=name)


def _binary(a: Tensor, b: Tensor, name: str, fn: Callable[[Array, Array], Array]) -> Array:
    """Apply ``fn`` to the arrays, turning NumPy's broadcasting error into a clear one."""
    try:
        return fn(a.data, b.data)
    except (TypeError, ValueError):
        check_same_device(name, a.data, b.data)  # raises naming both devices (CPU and GPU)
        broadcast_shapes(a.shape, b.shape, op=name)  # raises with the axes that clash
        raise


def _reduce_args(axis: Any, dim: Any, keepdims: bool, keepdim: bool | None) -> tuple[Any, bool]:
    """Merge NumPy's ``axis``/``keepdims`` with PyTorch's ``dim``/``keepdim`` (not both)."""
    if dim is not None:
        if axis is not None:
            raise TypeError(f"give axis= or dim= (the same thing), not both; got axis={axis!r} "
                            f"and dim={dim!r}")
        axis = dim
    if keepdim is not None:
        keepdims = keepdim
    if isinstance(axis, list):
        axis = tuple(axis)
    return axis, bool(keepdims)


def _axis_index(ndim: int, axis: Any, name: str) -> int:
    """One axis as an index from 0 to ndim - 1 (a 0-d tensor accepts 0 and -1, as PyTorch)."""
    if not isinstance(axis, int) or isinstance(axis, bool):
        raise TypeError(f"{name}: an axis must be an int; got {axis!r}")
    top = max(ndim, 1)
    if not -top <= axis < top:
        raise AxisError(f"{name}: axis {axis} is out of range for a tensor with {ndim} axes "
                        f"(expected {-top} to {top - 1})")
    return axis % top if ndim else 0


def _axes(ndim: int, axis: Any, name: str = "reduction") -> tuple[int, ...]:
    """The axes named by ``axis`` (an int, a tuple/list of ints, or None for all), each once."""
    if axis is None:
        return tuple(range(ndim))
    items = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    axes = tuple(_axis_index(ndim, a, name) for a in items)
    if len(set(axes)) != len(axes):
        raise ValueError(f"{name}: axis {axis!r} names an axis twice")
    return axes if ndim else ()


def _kept_shape(shape: tuple[int, ...], axis: Any) -> tuple[int, ...]:
    """The shape of a reduction over ``axis`` with ``keepdims=True``."""
    axes = _axes(len(shape), axis)
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def _reduced_shape(shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, ...]:
    """The shape of a reduction over ``axes`` without keepdims."""
    return tuple(n for i, n in enumerate(shape) if i not in axes)


def _extreme(t: Tensor, axis: Any, keepdims: bool, kind: str) -> Tensor:
    """max or min over ``axis``; tied values share the gradient evenly, as PyTorch.

    Over all axes (``torch.max()``) a NaN result sends the gradient to the NaNs; over some
    axes (``torch.amax``) a row with a NaN gets NaN gradients, as in PyTorch.
    """
    whole = axis is None
    xp, shape = t._xp, t.shape
    axes = _axes(t.ndim, axis)
    _check_nonempty(shape, axes, kind, whole)
    reduce = xp.max if kind == "max" else xp.min
    y = reduce(t.data, axis=axes, keepdims=True)
    out = y if keepdims else xp.reshape(y, _reduced_shape(shape, axes))

    def vjp(g: Array, x: Array, y: Array) -> Array:
        hit = (x == y) | (xp.isnan(x) & xp.isnan(y)) if whole else x == y  # the tied winners
        hit = xp.astype(hit, g.dtype)
        return hit * (xp.reshape(g, y.shape) / xp.sum(hit, axis=axes, keepdims=True))

    return op(out, (t,), vjp, saved=(t.data, y), name=kind)


def _extreme_with_index(t: Tensor, dim: int, keepdim: bool, kind: str) -> MaxMin:
    """PyTorch's ``max(dim=...)``: the values and their indices; the gradient to the index."""
    xp, shape = t._xp, t.shape
    d = _axis_index(t.ndim, dim, kind)
    _check_nonempty(shape, (d,) if t.ndim else (), kind, False)
    if t.ndim == 0:
        return MaxMin(t + 0, Tensor(xp.zeros((), dtype=xp.int64)))
    pick = xp.argmax if kind == "max" else xp.argmin
    idx = pick(t.data, axis=d, keepdims=True)  # the first extreme (NaN counts as extreme)
    values = xp.take_along_axis(t.data, idx, axis=d)
    n = shape[d]
    at = xp.reshape(xp.arange(n), tuple(n if i == d else 1 for i in range(t.ndim)))
    kept = tuple(1 if i == d else m for i, m in enumerate(shape))
    out_shape = kept if keepdim else _reduced_shape(shape, (d,))
    y = op(xp.reshape(values, out_shape), (t,),
           lambda g: xp.where(at == idx, xp.reshape(g, kept), 0.0), name=kind)
    return MaxMin(y, Tensor(xp.reshape(idx, out_shape)))


def _arg_extreme(t: Tensor, axis: Any, dim: Any, keepdims: bool, keepdim: bool | None,
                 kind: str) -> Tensor:
    axis, keepdims = _reduce_args(axis, dim, keepdims, keepdim)
    xp = t._xp
    if axis is None or t.ndim == 0:
        _check_nonempty(t.shape, tuple(range(t.ndim)), kind, True)
    else:
        _check_nonempty(t.shape, (_axis_index(t.ndim, axis, kind),), kind, False)
    pick = xp.argmax if kind == "argmax" else xp.argmin
    if axis is None:
        i = pick(xp.reshape(t.data, (-1,)))
        return Tensor(xp.reshape(i, (1,) * t.ndim) if keepdims else i)
    a = _axis_index(t.ndim, axis, kind)
    if t.ndim == 0:
        return Tensor(xp.zeros((), dtype=xp.int64))
    return Tensor(pick(t.data, axis=a, keepdims=keepdims))


def _product_of_others(xp: Any, x: Array, axes: tuple[int, ...]) -> Array:
    """For each value, the product of the other values of its group (the group: ``axes``).

    The reduced axes are moved last and merged; then the product of the values before each
    one (a running product from the left) times the product of those after it (from the
    right). No division, so zeros are handled exactly.
    """
    shape = tuple(x.shape)
    rest = tuple(i for i in range(len(shape)) if i not in axes)
    perm = rest + axes
    inverse = tuple(sorted(range(len(shape)), key=perm.__getitem__))
    moved = tuple(shape[i] for i in perm)
    flat = xp.reshape(xp.permute_dims(x, perm), tuple(shape[i] for i in rest) + (-1,))
    left = xp.cumulative_prod(flat, axis=-1, include_initial=True)[..., :-1]
    flipped = xp.flip(flat, axis=-1)
    right = xp.flip(xp.cumulative_prod(flipped, axis=-1, include_initial=True)[..., :-1], axis=-1)
    return xp.permute_dims(xp.reshape(left * right, moved), inverse)


def _pick(a: Any, b: Any, kind: str) -> Tensor:
    a, b = _operands(a, b, kind)
    xp, sa, sb = a._xp, a.shape, b.shape
    fn = xp.maximum if kind == "maximum" else xp.minimum
    y = _binary(a, b, kind, fn)

    def vjp(g: Array, x: Array, w: Array) -> tuple[Any, ...]:
        # PyTorch's rule: each side gets g unless it lost (half at a tie). A NaN loses to
        # nothing and beats nothing, so at a NaN both sides get g.
        a_lost, b_lost = (x < w, x > w) if kind == "maximum" else (x > w, x < w)
        tie = x == w
        half = 0.5 * g
        return (unbroadcast(xp.where(tie, half, xp.where(a_lost, 0.0, g)), sa),
                unbroadcast(xp.where(tie, half, xp.where(b_lost, 0.0, g)), sb))

    return op(y, (a, b), vjp, saved=(a.data, b.data), name=kind)


def _deviations(x: Tensor, axes: tuple[int, ...], correction: Any) -> tuple[Any, float]:
    """What var and std share: ``x - mean`` over ``axes`` (kept as size 1) and the divisor
    ``max(0, N - correction)``, as PyTorch: with ``correction >= N`` the variance is
    ``sum / 0``, inf for values that differ and NaN for equal ones."""
    if _scalar(correction) is None:
        raise TypeError(f"var/std: correction must be a number (1: unbiased, 0: NumPy's "
                        f"default); got {correction!r}")
    xp = x._xp
    n = math.prod(x.shape[i] for i in axes)
    d = x.data - xp.mean(x.data, axis=axes, keepdims=True)
    return d, (n - correction if n - correction > 0 else 0.0)  # a NaN correction gives 0 too


def _check_nonempty(shape: tuple[int, ...], axes: tuple[int, ...], kind: str,
                    whole: bool) -> None:
    """max, min, argmax, argmin: an axis of size 0 to reduce over is an error, as PyTorch; an
    empty tensor reduced over other axes gives an empty result."""
    if whole:
        if math.prod(shape) == 0:
            raise ValueError(f"{kind}: cannot reduce an empty tensor of shape {shape}: an empty "
                             f"set has no {kind} (give an axis of nonzero size)")
        return
    for a in axes:
        if shape[a] == 0:
            raise ValueError(f"{kind}: cannot reduce over axis {a} of size 0 (shape {shape}): "
                             f"an empty set has no {kind}")


def _check_divisor(a: Tensor, b: Tensor, name: str) -> None:
    """Integer division (``//``, ``%``) by 0 raises ``ZeroDivisionError``, as PyTorch (NumPy
    gives 0 with a warning). Only arrays in host memory are read (on a GPU the read would wait)."""
    xp = b._xp
    if _kind(xp, b.dtype) < 2 and _host_values(b.data) and bool(xp.any(b.data == 0)):
        raise ZeroDivisionError(f"{name}: integer division by zero (the divisor of shape "
                                f"{b.shape} holds a 0); PyTorch raises too. Divide floats for "
                                "inf or NaN")


def _compare(a: Tensor, other: Any, name: str, fn: Callable[[Array, Array], Array]) -> Tensor:
    """A comparison, elementwise: a boolean tensor, no gradient; a shape clash is named."""
    b = _raw(other)
    try:
        return Tensor(fn(a.data, b))
    except (TypeError, ValueError):
        if hasattr(b, "shape") and hasattr(b, "dtype"):
            check_same_device(name, a.data, b)
            broadcast_shapes(a.shape, tuple(b.shape), op=name)
        raise


def _check_shape(shape: tuple[Any, ...], name: str) -> tuple[int, ...]:
    """A target shape: ints (NumPy's too) of at least 0, and ``-1`` (inferred) at most once."""
    sizes = []
    for k, n in enumerate(shape):
        if not isinstance(n, numbers.Integral) or isinstance(n, bool):
            raise TypeError(f"{name}: sizes must be ints; got {n!r} at index {k} of {shape}")
        if n < -1:
            raise ValueError(f"{name}: invalid size {n} at index {k} of {shape}: sizes must be "
                             ">= 0, or -1 (once) to infer one")
        sizes.append(int(n))
    if sizes.count(-1) > 1:
        raise ValueError(f"{name}: only one size can be -1 (inferred); got {shape}")
    return tuple(sizes)


def _need_matrix(t: Tensor, name: str, diagonal: Any = 0) -> None:
    if not isinstance(diagonal, numbers.Integral) or isinstance(diagonal, bool):
        raise TypeError(f"{name}: diagonal must be an int; got {diagonal!r}")
    if t.ndim < 2:
        raise ValueError(f"{name}: expected a tensor with at least 2 axes (a matrix or a stack "
                         f"of them); got shape {t.shape}")


def _host_values(x: Array) -> bool:
    """True when reading ``x``'s values costs no wait on a GPU (NumPy, array-api-strict)."""
    return not device_name(x).startswith("cuda")


def _scatter_along(xp: Any, g: Array, idx: Array, d: int, part: tuple[Any, ...],
                   shape: tuple[int, ...],
                   dtype: Any) -> Array:
    """The backward of gather: add ``g`` back at ``idx`` along axis ``d`` (repeats add up).

    Along axis ``d`` each index is one-hot encoded against the ``n`` positions, and the
    gradient is summed over the picks: (..., k, 1) * (..., k, n) summed over k.
    """
    n = shape[d]
    g_last = xp.moveaxis(g, d, -1)[..., None]  # (..., k, 1)
    hot = xp.moveaxis(idx, d, -1)[..., None] == xp.arange(n)  # (..., k, n)
    picked = xp.moveaxis(xp.sum(xp.where(hot, g_last, 0.0), axis=-2), -1, d)
    out = xp.zeros(shape, dtype=dtype)
    out[part] = picked
    return out


def _index_for(index: Any, data: Array) -> Any:
    """Unwrap tensors, turn lists into integer arrays of ``data``'s namespace, end with ``...``."""
    items = index if isinstance(index, tuple) else (index,)
    out = []
    for i in items:
        if isinstance(i, Tensor):
            i = i.data
        elif isinstance(i, list):
            i = asarray(i, like=data)
            if i.size == 0:  # x[[]]: no positions, an integer index (as PyTorch), not float64
                i = namespace(i).astype(i, namespace(i).int64)
        out.append(i)
    if all(i is None or isinstance(i, (int, slice)) for i in out):
        out.append(Ellipsis)  # the same in NumPy; the array API asks for it explicitly
    return tuple(out)
