"""Small data sets for the course and the examples, and a minibatch iterator.

* :func:`moons` -- two interleaving half circles in 2-D (scikit-learn's ``make_moons``);
* :func:`digits` -- scikit-learn's bundled 8x8 handwritten digits (1,797 images, no download),
  optionally upsampled to 32x32 for LeNet-5, split into train and test sets;
* :func:`batches` -- shuffled minibatches of any arrays ``X, y``.

This module is standalone: NumPy and scikit-learn, never the engine.
"""
from __future__ import annotations

from typing import Iterator

import numpy as np

__all__ = ["moons", "digits", "batches"]


def moons(n: int = 1000, noise: float = 0.1, seed: int | None = 0,
          dtype: str = "float64") -> tuple[np.ndarray, np.ndarray]:
    """Two interleaving half circles: a 2-D problem no straight line separates.

    Parameters
    ----------
    n : int
        Number of points (half in each class).
    noise : float
        Standard deviation of the Gaussian noise added to each point.
    seed : int or None
        Seed of the noise and the order of the points (``None``: different every call).
    dtype : str
        The dtype of ``X``.

    Returns
    -------
    X : ndarray of shape (n, 2)
        The points.
    y : ndarray of shape (n,), int64
        The class of each point, 0 or 1.
    """
    from sklearn.datasets import make_moons

    X, y = make_moons(n_samples=n, noise=noise, random_state=seed)
    return X.astype(dtype), y.astype(np.int64)


def digits(size: int = 8, test_size: float = 0.2, seed: int | None = 0,
           dtype: str = "float64", upsample: str = "bilinear"
           ) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """The 8x8 handwritten digits bundled with scikit-learn, as images for a conv net.

    Pixel values (0 to 16 in the source) are scaled to [0, 1]. The split is stratified, so
    train and test sets have the same share of each digit.

    Parameters
    ----------
    size : int
        Side of the returned images: 8 (as stored) or larger, e.g. 32 for LeNet-5.
    test_size : float
        Fraction of the images held out for testing (between 0 and 1).
    seed : int or None
        Seed of the train/test split.
    dtype : str
        The dtype of the images.
    upsample : {"bilinear", "nearest"}
        How images are enlarged when ``size > 8``: smooth interpolation, or each pixel
        repeated as a block (``size`` must then be a multiple of 8).

    Returns
    -------
    (X_train, y_train), (X_test, y_test)
        Images of shape (N, 1, size, size) and int64 labels 0-9 of shape (N,).

    Example
    -------
    >>> (X_train, y_train), (X_test, y_test) = digits(size=32)
    >>> X_train.shape, X_test.shape
    ((1437, 1, 32, 32), (360, 1, 32, 32))
    """
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    if not isinstance(size, int) or size < 8:
        raise ValueError(f"digits: size must be an int >= 8 (the images are 8x8); got {size!r}")
    if not 0 < test_size < 1:
        raise ValueError(f"digits: test_size must be between 0 and 1; got {test_size!r}")
    data = load_digits()
    images = data.images / 16.0  # (1797, 8, 8), values 0..1
    if size != 8:
        images = _resize(images, size, upsample)
    X = images[:, None, :, :].astype(dtype)
    y = data.target.astype(np.int64)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=test_size, random_state=seed, stratify=y)
    return (X_train, y_train), (X_test, y_test)


def _resize(images: np.ndarray, size: int, method: str) -> np.ndarray:
    """Enlarge square images (N, h, h) to (N, size, size)."""
    h = images.shape[-1]
    if method == "nearest":
        if size % h:
            raise ValueError(f"digits: nearest upsampling needs a size that is a multiple of "
                             f"{h}; got {size}. Use upsample='bilinear'.")
        k = size // h
        return images.repeat(k, axis=1).repeat(k, axis=2)
    if method != "bilinear":
        raise ValueError(f"digits: upsample must be 'bilinear' or 'nearest'; got {method!r}")
    A = _interpolation_matrix(h, size)  # (size, h): each output pixel mixes two inputs
    return A @ images @ A.T


def _interpolation_matrix(n_in: int, n_out: int) -> np.ndarray:
    """Linear interpolation from ``n_in`` to ``n_out`` samples, pixel centres aligned."""
    centres = (np.arange(n_out) + 0.5) * n_in / n_out - 0.5  # output centres in input units
    centres = np.clip(centres, 0, n_in - 1)
    lo = np.floor(centres).astype(int)
    hi = np.minimum(lo + 1, n_in - 1)
    frac = centres - lo
    A = np.zeros((n_out, n_in))
    A[np.arange(n_out), lo] += 1 - frac
    A[np.arange(n_out), hi] += frac
    return A


def batches(X: np.ndarray, y: np.ndarray, batch_size: int = 32, shuffle: bool = True,
            seed: int | np.random.Generator | None = None, drop_last: bool = False
            ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Yield minibatches ``(X[idx], y[idx])`` that together cover the data once (one epoch).

    Parameters
    ----------
    X, y : arrays
        Inputs and targets with the same first axis.
    batch_size : int
        Rows per batch; the last batch may be smaller unless ``drop_last``.
    shuffle : bool
        Visit the rows in a random order.
    seed : int, numpy Generator or None
        The shuffle's randomness. An int gives the same order every call; pass one Generator
        for all epochs to get a new order each epoch, reproducibly.
    drop_last : bool
        Leave out a last batch smaller than ``batch_size``.

    Example
    -------
    >>> X, y = moons(100)
    >>> rng = np.random.default_rng(0)
    >>> [len(yb) for Xb, yb in batches(X, y, batch_size=32, seed=rng)]
    [32, 32, 32, 4]
    """
    n = len(X)
    if len(y) != n:
        raise ValueError(f"batches: X has {n} rows but y has {len(y)}; they must match")
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batches: batch_size must be a positive int; got {batch_size!r}")
    order = np.random.default_rng(seed).permutation(n) if shuffle else np.arange(n)
    stop = n - n % batch_size if drop_last else n
    for start in range(0, stop, batch_size):
        idx = order[start:start + batch_size]
        yield X[idx], y[idx]
