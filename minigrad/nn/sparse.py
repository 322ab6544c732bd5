"""Lookup layers: :class:`Embedding`, a table of learned vectors indexed by integers.

An embedding turns a token id into a vector: row ``i`` of ``weight`` is the vector of token
``i``. Looking rows up is indexing, and its gradient adds each output row's gradient back into
the row it was read from (a token used twice gets both gradients), so only the rows used in a
batch receive a gradient. This is the same as multiplying a one-hot matrix by ``weight``,
without ever forming the one-hot matrix.
"""
from __future__ import annotations

from typing import Any

from .. import backend
from ..tensor import Tensor, op
from .modules import Module, Parameter

__all__ = ["Embedding"]


class Embedding(Module):
    """A table of ``num_embeddings`` vectors of size ``embedding_dim``, looked up by index.

    ``embedding(ids)`` with integer ``ids`` of any shape ``S`` returns ``weight[ids]``, of
    shape ``S + (embedding_dim,)``.

    Parameters
    ----------
    num_embeddings : int
        Size of the table (e.g. the number of distinct characters).
    embedding_dim : int
        Size of each vector.
    padding_idx : int, optional
        A row that stays at zero: it is initialised to zeros and never gets a gradient, as
        in PyTorch (for the padding token of sequences of unequal length).
    rng, seed : numpy Generator or int, optional
        Draw ``weight`` (num_embeddings, embedding_dim) from the standard normal
        distribution (PyTorch's default).
    dtype : str
        ``"float64"`` (default) or ``"float32"``.
    device : str, optional
        ``"cpu"`` (NumPy) or ``"cuda"`` (CuPy).

    Example
    -------
    >>> emb = Embedding(10, 3, seed=0)
    >>> emb([[1, 2], [2, 9]]).shape
    (2, 2, 3)
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 *, rng: Any = None, seed: int | None = None, dtype: Any = "float64",
                 device: str | None = None) -> None:
        super().__init__()
        for label, n in (("num_embeddings", num_embeddings), ("embedding_dim", embedding_dim)):
            if not isinstance(n, int) or isinstance(n, bool) or n < 1:
                raise ValueError(f"Embedding: {label} must be a positive int; got {n!r}")
        if padding_idx is not None:
            if not isinstance(padding_idx, int) or isinstance(padding_idx, bool) or \
                    not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(f"Embedding: padding_idx must be an int in [-{num_embeddings}, "
                                 f"{num_embeddings}); got {padding_idx}")
            padding_idx %= num_embeddings
        if rng is not None and seed is not None:
            raise ValueError("Embedding: pass rng or seed, not both")
        rng = backend.default_rng(rng if rng is not None else seed)
        values = backend.default_rng(rng).standard_normal((num_embeddings, embedding_dim))
        if padding_idx is not None:
            values[padding_idx] = 0.0
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx = padding_idx
        self.weight = Parameter(backend.copy_to(values, dtype=dtype, device=device))

    def forward(self, ids: Any) -> Tensor:
        """Rows ``weight[ids]``; backward adds ``g`` into the rows read (repeats add up)."""
        weight = self.weight
        xp = weight._xp
        ids = ids.data if isinstance(ids, Tensor) else ids
        if not hasattr(ids, "dtype"):  # a list or a number
            ids = backend.asarray(ids, like=weight.data)
        if not backend.is_integer(backend.namespace(ids), ids.dtype):
            raise TypeError(f"Embedding: indices must be integers; got dtype {ids.dtype}")
        # one yes-or-no read (not the min and max, which change from batch to batch): a compiled
        # step checks it at each replay without recording anew
        if ids.size and not bool(xp.all((ids >= 0) & (ids < self.num_embeddings))):
            raise IndexError(f"Embedding: indices must be in [0, {self.num_embeddings}); got "
                             f"values from {int(xp.min(ids))} to {int(xp.max(ids))}")
        shape, dtype, pad = weight.shape, weight.dtype, self.padding_idx

        def vjp(g: Any) -> Any:
            grad = backend.scatter_add(xp, shape, dtype, (ids,), g)  # (num_embeddings, dim)
            if pad is not None:  # the padding row never learns
                grad = backend.times_mask(grad, (xp.arange(shape[0]) != pad)[:, None])
            return grad

        rows = xp.take(weight.data, xp.reshape(ids, (-1,)), axis=0)  # (ids.size, dim)
        return op(xp.reshape(rows, tuple(ids.shape) + (shape[1],)), (weight,), vjp,
                  name="embedding")

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        return s + f", padding_idx={self.padding_idx}" if self.padding_idx is not None else s
