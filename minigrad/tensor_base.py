"""The array side of a :class:`~minigrad.tensor.Tensor`: what it holds and how it shows.

Shape, dtype, device, ``repr``, ``item()``, ``numpy()``, ``len()``, truth value, the two
flags ``retain_grad()`` and ``requires_grad_()``, and the check of ``backward(grad)``'s
argument: nothing here records or runs a graph. The
core, :mod:`minigrad.tensor`, subclasses :class:`TensorBase` and adds the autodiff; the notes
below, on where minigrad follows PyTorch and where NumPy, hold for every operation. This
module imports only :mod:`minigrad.backend`.
"""
from __future__ import annotations

import math
from typing import Any, TypeVar

from .backend import Array, asarray, device_name, is_floating, to_numpy

__all__ = ["TensorBase"]

_T = TypeVar("_T", bound="TensorBase")


class TensorBase:
    """What every :class:`~minigrad.tensor.Tensor` has as an array (it holds no state itself).

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

    __slots__ = ()
    data: Array
    grad: Array | None
    requires_grad: bool
    _op: str | None
    _vjp: Any
    _xp: Any
    _retains_grad: bool

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
        return math.prod(self.data.shape)

    @property
    def is_leaf(self) -> bool:
        """True for tensors not made by a recorded operation (inputs and parameters)."""
        return self._vjp is None

    @property
    def device(self) -> str:
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

    def item(self) -> float | int | bool:
        """The single value of a one-element tensor, as a Python number."""
        if self.size != 1:
            raise ValueError(f"item(): tensor has {self.size} elements, expected 1")
        return to_numpy(self.data).item()

    def numpy(self) -> Any:
        """The data as a NumPy array (copied from the GPU if needed)."""
        return to_numpy(self.data)

    def retain_grad(self: _T) -> _T:
        """Keep ``.grad`` on this non-leaf tensor after ``backward()`` (leaves always do)."""
        self._retains_grad = True
        return self

    def requires_grad_(self: _T, flag: bool = True) -> _T:
        """Set ``requires_grad`` in place and return ``self``."""
        if flag and not is_floating(self._xp, self.data.dtype):
            raise TypeError(f"requires_grad_: integer tensors (dtype {self.data.dtype}) cannot "
                            "require grad")
        self.requires_grad = flag
        return self

    def _seed(self, grad: Any) -> Array:
        """The gradient ``backward(grad)`` starts from: ``grad`` checked, or ones."""
        if not self.requires_grad:
            raise RuntimeError("backward: this tensor does not require grad; none of the "
                               "tensors it was computed from has requires_grad=True")
        if grad is None:
            if self.size != 1:
                raise RuntimeError(
                    f"backward: grad can be left out only for a single-value output; this "
                    f"output has shape {self.shape}. Reduce it first (e.g. .sum()) or pass "
                    f"backward(grad) with an array of shape {self.shape}.")
            return self._xp.ones_like(self.data)
        grad = grad.data if isinstance(grad, TensorBase) else asarray(grad, like=self.data)
        if tuple(grad.shape) != self.shape:
            raise ValueError(f"backward: grad has shape {tuple(grad.shape)} but the output "
                             f"has shape {self.shape}")
        return grad
