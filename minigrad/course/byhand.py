"""Layers with hand-written backward passes: the oracle the engine must match.

Each layer has a ``forward(x)`` that caches what its backward pass will need, and a
``backward(grad_out)`` that takes dL/d(output) and returns dL/d(input), storing the gradients of
its own parameters on the layer (``dW``, ``db``). The formulas are the ones derived on paper:

=================== ================================  ===========================================
layer               forward                           backward
=================== ================================  ===========================================
Linear              ``y = x @ W.T + b``               ``dW = g.T @ x``, ``db = sum(g, axis=0)``,
                                                      ``dx = g @ W``
ReLU                ``y = max(x, 0)``                 ``dx = g * (x > 0)``
Sigmoid             ``y = 1 / (1 + exp(-x))``         ``dx = g * y * (1 - y)``
SoftmaxCrossEntropy ``L = mean(-log softmax(z)[t])``  ``dz = (softmax(z) - onehot(t)) / N``
=================== ================================  ===========================================

Weights use the layout of :class:`minigrad.nn.Linear` (``W`` of shape (out, in), ``b`` of shape
(out,)) and the same initialisation from the same random numbers, so a network built here and
one built with ``minigrad.nn`` from the same seed start with equal parameters, and their
training runs can be compared step for step.

This module is standalone: NumPy only, never the engine it checks.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

__all__ = ["Linear", "ReLU", "Sigmoid", "SoftmaxCrossEntropy", "MLP", "sgd_step", "train"]


class Linear:
    """A fully connected layer ``y = x @ W.T + b``.

    Parameters
    ----------
    in_features, out_features : int
        Sizes of the input and output.
    rng : numpy Generator or int seed, optional
        The randomness of the initialisation: ``W`` and then ``b`` are drawn uniformly from
        ``(-1/sqrt(in_features), 1/sqrt(in_features))``, as PyTorch and ``minigrad.nn.Linear``.
    dtype : str
        dtype of ``W`` and ``b``.
    """

    def __init__(self, in_features: int, out_features: int,
                 rng: np.random.Generator | int | None = None, dtype: str = "float64") -> None:
        rng = np.random.default_rng(rng)
        bound = 1.0 / np.sqrt(in_features)
        self.W = rng.uniform(-bound, bound, size=(out_features, in_features)).astype(dtype)
        self.b = rng.uniform(-bound, bound, size=(out_features,)).astype(dtype)
        self.dW = np.zeros_like(self.W)
        self.db = np.zeros_like(self.b)

    def forward(self, x: np.ndarray) -> np.ndarray:
        self.x = x  # dW needs the input
        return x @ self.W.T + self.b

    def backward(self, grad_out: np.ndarray) -> np.ndarray:
        self.dW = grad_out.T @ self.x
        self.db = grad_out.sum(axis=0)
        return grad_out @ self.W

    def params(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Each parameter with its gradient: ``[(W, dW), (b, db)]``."""
        return [(self.W, self.dW), (self.b, self.db)]


class ReLU:
    """``y = max(x, 0)``: the gradient passes where the input was positive, else it stops."""

    def forward(self, x: np.ndarray) -> np.ndarray:
        self.positive = x > 0
        return np.where(self.positive, x, 0.0)

    def backward(self, grad_out: np.ndarray) -> np.ndarray:
        return np.where(self.positive, grad_out, 0.0)

    def params(self) -> list[tuple[np.ndarray, np.ndarray]]:
        return []


class Sigmoid:
    """``y = 1 / (1 + exp(-x))``, whose derivative is ``y (1 - y)``."""

    def forward(self, x: np.ndarray) -> np.ndarray:
        e = np.exp(-np.abs(x))  # never overflows: exp of a value <= 0
        self.y = np.where(x >= 0, 1 / (1 + e), e / (1 + e))
        return self.y

    def backward(self, grad_out: np.ndarray) -> np.ndarray:
        return grad_out * self.y * (1 - self.y)

    def params(self) -> list[tuple[np.ndarray, np.ndarray]]:
        return []


class SoftmaxCrossEntropy:
    """Mean cross-entropy of ``softmax(logits)`` against integer class targets.

    ``forward(logits, targets)`` returns the loss (a float) and ``backward()`` the gradient with
    respect to the logits, ``(softmax(logits) - onehot(targets)) / N``.
    """

    def forward(self, logits: np.ndarray, targets: np.ndarray) -> float:
        n = logits.shape[0]
        z = logits - logits.max(axis=1, keepdims=True)  # softmax is unchanged by a shift
        log_probs = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        self.probs = np.exp(log_probs)
        self.onehot = np.zeros_like(logits)
        self.onehot[np.arange(n), targets] = 1
        return float(-log_probs[np.arange(n), targets].mean())

    def backward(self, grad_out: float = 1.0) -> np.ndarray:
        n = self.probs.shape[0]
        return grad_out * (self.probs - self.onehot) / n


class MLP:
    """Layers applied one after another, with a backward pass that runs them in reverse.

    Parameters
    ----------
    layers : sequence of layers
        E.g. ``[Linear(2, 16, rng), ReLU(), Linear(16, 2, rng)]``.
    """

    def __init__(self, layers: Sequence[Any]) -> None:
        self.layers = list(layers)

    @classmethod
    def from_sizes(cls, sizes: Sequence[int], activation: type = ReLU,
                   rng: np.random.Generator | int | None = None, dtype: str = "float64") -> "MLP":
        """``from_sizes([2, 16, 16, 2])``: Linear layers with ``activation`` between them."""
        rng = np.random.default_rng(rng)
        layers: list[Any] = []
        for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
            if i > 0:
                layers.append(activation())
            layers.append(Linear(n_in, n_out, rng=rng, dtype=dtype))
        return cls(layers)

    def forward(self, x: np.ndarray) -> np.ndarray:
        for layer in self.layers:
            x = layer.forward(x)
        return x

    def backward(self, grad_out: np.ndarray) -> np.ndarray:
        for layer in reversed(self.layers):
            grad_out = layer.backward(grad_out)
        return grad_out

    def params(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Every parameter with its gradient, layer by layer."""
        return [pair for layer in self.layers for pair in layer.params()]

    def state_dict(self) -> dict[str, np.ndarray]:
        """The parameters, named as ``minigrad.nn.Sequential`` names them (``"0.weight"``)."""
        state = {}
        for i, layer in enumerate(self.layers):
            if isinstance(layer, Linear):
                state[f"{i}.weight"] = layer.W
                state[f"{i}.bias"] = layer.b
        return state


def sgd_step(model: MLP, lr: float) -> None:
    """Plain gradient descent, in place: ``p -= lr * dp`` for every parameter."""
    for p, dp in model.params():
        p -= lr * dp


def train(model: MLP, X: np.ndarray, y: np.ndarray, epochs: int = 10, lr: float = 0.1,
          batch_size: int | None = None, seed: int | np.random.Generator | None = 0,
          callback: Callable[[int, float], None] | None = None) -> list[float]:
    """The whole training loop, by hand: forward, loss, backward, update.

    Parameters
    ----------
    model : MLP
        The network; its parameters are updated in place.
    X, y : ndarray
        Inputs (N, features) and integer class targets (N,).
    epochs : int
        Passes over the data.
    lr : float
        Learning rate of plain SGD.
    batch_size : int or None
        Rows per step (``None``: the whole data set each step).
    seed : int, numpy Generator or None
        Shuffling of the minibatches (one Generator for all epochs).
    callback : callable, optional
        ``callback(step, loss)`` after every step.

    Returns
    -------
    list of float
        The loss of every step.
    """
    loss_fn = SoftmaxCrossEntropy()
    rng = np.random.default_rng(seed)
    n = len(X)
    size = n if batch_size is None else batch_size
    losses = []
    for _ in range(epochs):
        order = rng.permutation(n) if batch_size is not None else np.arange(n)
        for start in range(0, n, size):
            idx = order[start:start + size]
            loss = loss_fn.forward(model.forward(X[idx]), y[idx])
            model.backward(loss_fn.backward())
            sgd_step(model, lr)
            losses.append(loss)
            if callback is not None:
                callback(len(losses), loss)
    return losses
