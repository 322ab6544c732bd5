"""Data sets and batches, as ``torch.utils.data``: :class:`Dataset`, :class:`TensorDataset`,
:class:`DataLoader` and :func:`default_collate`.

>>> import numpy as np, minigrad as mg
>>> from minigrad.utils.data import DataLoader, TensorDataset
>>> ds = TensorDataset(mg.tensor(np.arange(10.0).reshape(5, 2)), mg.tensor([0, 1, 0, 1, 1]))
>>> [tuple(x.shape) for x, y in DataLoader(ds, batch_size=2)]
[(2, 2), (2, 2), (1, 2)]

This is the engine's loader (it makes tensors). ``minigrad.data`` is another thing: the course's
data sets in plain NumPy, which does not import the engine (the hand-built oracle uses it).
Shuffling draws from an explicit ``numpy.random.Generator`` (``generator=``) or ``seed=``, so
an epoch's order can be repeated.
"""
from __future__ import annotations

import math
import numbers
from typing import Any, Callable, Iterator, Sequence

from .. import backend
from ..reshaping import stack
from ..tensor import Tensor

__all__ = ["Dataset", "TensorDataset", "DataLoader", "default_collate"]


class Dataset:
    """A map-style data set: ``len(ds)`` samples, ``ds[i]`` the i-th. Subclass it and define
    ``__getitem__`` and ``__len__``."""

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError(f"{type(self).__name__} has no __getitem__; define it")

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__} has no __len__; define it")


class TensorDataset(Dataset):
    """Samples taken along the first axis of tensors of one length: ``ds[i]`` is
    ``tuple(t[i] for t in tensors)``, as ``torch.utils.data.TensorDataset``.

    Parameters
    ----------
    *tensors : Tensor
        All with the same size of axis 0.
    """

    def __init__(self, *tensors: Tensor) -> None:
        if not tensors:
            raise ValueError("TensorDataset: give at least one tensor")
        for k, t in enumerate(tensors):
            if not isinstance(t, Tensor):
                raise TypeError(f"TensorDataset: argument {k} is a {type(t).__name__}, not a "
                                "Tensor. Wrap it first: minigrad.tensor(x)")
            if t.ndim == 0:
                raise ValueError(f"TensorDataset: tensor {k} is 0-d; samples are taken along "
                                 "axis 0")
        n = tensors[0].shape[0]
        for k, t in enumerate(tensors[1:], start=1):
            if t.shape[0] != n:
                raise ValueError(f"TensorDataset: size mismatch between tensors: tensor 0 has "
                                 f"{n} samples, tensor {k} has {t.shape[0]}")
        self.tensors = tensors

    def __getitem__(self, index: int) -> tuple[Tensor, ...]:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


def default_collate(batch: Sequence[Any]) -> Any:
    """Join a list of samples into a batch, as PyTorch's ``default_collate``.

    Tensors are stacked along a new axis 0; numbers become a tensor (float64 for floats,
    int64 for ints); arrays are stacked; tuples and lists of fields are collated field by
    field (a list of batches, as PyTorch); dicts key by key. Other objects are returned as a list.
    """
    if not len(batch):
        raise ValueError("default_collate: an empty batch")
    first = batch[0]
    if isinstance(first, Tensor):
        return stack(list(batch))  # as PyTorch: a graph the samples belong to is kept
    if isinstance(first, numbers.Number):  # bools, ints, floats (NumPy scalars too)
        return Tensor(backend.asarray(list(batch)))
    if hasattr(first, "shape") and hasattr(first, "dtype"):  # arrays
        return stack([Tensor(b) for b in batch])
    if isinstance(first, dict):
        return {key: default_collate([b[key] for b in batch]) for key in first}
    if isinstance(first, (tuple, list)):
        size = len(first)
        if any(len(b) != size for b in batch):
            raise RuntimeError("default_collate: each sample in a batch must have the same "
                               "number of fields")
        return [default_collate(list(fields)) for fields in zip(*batch)]
    return list(batch)


class DataLoader:
    """Batches of a data set, as ``torch.utils.data.DataLoader`` (one process).

    Parameters
    ----------
    dataset : Dataset
        Anything with ``__len__`` and ``__getitem__``.
    batch_size : int or None
        Samples per batch (1 by default); None: the samples one by one, not collated.
    shuffle : bool
        A new random order at each epoch (each ``iter()``), drawn from ``generator``.
    generator : numpy Generator, optional
        Draws the orders; ``seed=`` makes one. With neither (and ``shuffle``), fresh entropy.
    drop_last : bool
        Drop the last batch if it is smaller than ``batch_size``.
    collate_fn : callable, optional
        Makes a batch of a list of samples (:func:`default_collate` by default).
    seed : int, optional
        A seed for a new generator, instead of ``generator`` (minigrad's explicit seeds).
    """

    def __init__(self, dataset: Any, batch_size: int | None = 1, shuffle: bool = False,
                 sampler: Any = None, batch_sampler: Any = None, num_workers: int = 0,
                 collate_fn: Callable[[list[Any]], Any] | None = None, pin_memory: bool = False,
                 drop_last: bool = False, *, generator: Any = None,
                 seed: int | None = None) -> None:
        if batch_size is not None and (not isinstance(batch_size, numbers.Integral)
                                       or isinstance(batch_size, bool) or batch_size < 1):
            raise ValueError(f"DataLoader: batch_size should be a positive integer value; got "
                             f"batch_size={batch_size!r}")
        if not isinstance(shuffle, bool):
            raise TypeError(f"DataLoader: shuffle must be a bool; got {shuffle!r}")
        if sampler is not None or batch_sampler is not None:
            raise NotImplementedError("DataLoader: sampler and batch_sampler are not "
                                      "supported; use shuffle= with generator= or seed=")
        if num_workers != 0:
            raise NotImplementedError("DataLoader: num_workers must be 0 (one process)")
        if generator is not None and seed is not None:
            raise ValueError("DataLoader: pass generator or seed, not both")
        if not hasattr(dataset, "__len__") or not hasattr(dataset, "__getitem__"):
            raise TypeError(f"DataLoader: dataset must have __len__ and __getitem__; got a "
                            f"{type(dataset).__name__}")
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.drop_last = drop_last
        self.collate_fn = default_collate if collate_fn is None else collate_fn
        self.generator = backend.default_rng(generator if generator is not None else seed) \
            if shuffle else generator

    def _order(self) -> list[int]:
        n = len(self.dataset)
        if not self.shuffle:
            return list(range(n))
        return [int(i) for i in self.generator.permutation(n)]

    def __iter__(self) -> Iterator[Any]:
        order = self._order()
        if self.batch_size is None:
            for i in order:
                yield self.dataset[i]
            return
        b = self.batch_size
        for lo in range(0, len(order), b):
            part = order[lo:lo + b]
            if len(part) < b and self.drop_last:
                return
            yield self.collate_fn([self.dataset[i] for i in part])

    def __len__(self) -> int:
        """The number of batches of an epoch."""
        n = len(self.dataset)
        if self.batch_size is None:
            return n
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)
