"""The benchmark cases: what is trained, on which data, from which initial weights.

Every contender of a case gets the *same* batches (as NumPy arrays, converted to its own array
type before the clock starts) and the *same* initial weights, so its first losses agree with
the others' to rounding: the harness checks that, so a contender that computed something else
could not win by it.

A case's *unit* is what one timing measures: one optimizer step (forward, backward, update) on
the next batch, or, for LeNet-5, one epoch of such steps.

LeNet-5 is written in every contender with each max-pooling *before* its ReLU (conv,
max-pool, ReLU, twice; then 120, 84, 10), the order of LeCun's LeNet-5 (subsample, then
squash) and of the tuned loop. The two orders compute the same values and gradients (ReLU is monotone, so it
commutes with a maximum), but the ReLU then works on the pooled array, a quarter of the size.
Until 2026-12-01 the minigrad and PyTorch contenders put the ReLU first, and so did more work
than the tuned loop they were compared with.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["CASES", "TARGETS", "Case", "as_unit", "init_params", "load_inputs", "make_data",
           "save_inputs"]


@dataclass(frozen=True)
class Case:
    """One benchmark: a network, a batch size, a dtype and an optimizer."""

    name: str
    title: str
    kind: str                      # "mlp", "lenet" or "gpt"
    dtype: str
    batch: int
    sizes: tuple[int, ...] = ()    # layer widths of an MLP, input first; a GPT's (blocks,
                                   # width, heads, context)
    lr: float = 0.1
    momentum: float = 0.0
    unit: str = "step"             # what one timing measures: "step" or "epoch"
    repeats: int = 9               # timed repeats per process (medians are taken over them)
    min_time: float = 0.25         # seconds that one timed repeat lasts at least
    # Worker processes per contender and round. One process's figure moves by up to a third
    # from the next one's on a shared machine, far more than its own repeats move
    # (bench/PROFILE.md), so the cheap cases are timed in several processes with fewer
    # repeats each: about the same time, a median over three times as many processes.
    processes: int = 1
    notes: dict[str, Any] = field(default_factory=dict, compare=False)


CASES: dict[str, Case] = {c.name: c for c in [
    Case("moons-1000-f32", "moons 2-16-16-2, full batch 1000, float32", "mlp", "float32",
         1000, (2, 16, 16, 2), repeats=3, processes=3),
    Case("moons-1000-f64", "moons 2-16-16-2, full batch 1000, float64", "mlp", "float64",
         1000, (2, 16, 16, 2), repeats=3, processes=3),
    Case("moons-32-f32", "moons 2-16-16-2, batch 32, float32", "mlp", "float32",
         32, (2, 16, 16, 2), repeats=3, processes=3),
    Case("lenet-f32", "LeNet-5 on digits 32x32, one epoch (batch 64), float32", "lenet",
         "float32", 64, lr=0.05, momentum=0.9, unit="epoch", repeats=5, min_time=0.0),
    Case("mlp-784-f32", "MLP 784-1024-1024-10, batch 256, float32", "mlp", "float32",
         256, (784, 1024, 1024, 10), lr=0.01, repeats=9),
    # issue 30: examples/char_gpt.py's GPT (AdamW, no schedule or clipping here), minigrad
    # eager and compiled against PyTorch; the NumPy loops have no attention (skipped)
    Case("gpt-2x64-f32", "char-GPT 2 blocks, width 64, context 64, batch 32, float32, AdamW",
         "gpt", "float32", 32, (2, 64, 4, 64), lr=3e-3, repeats=5, min_time=0.5),
]}

# Targets of issues 8 and 17: float32, one BLAS thread for every contender. (case, "numpy" or
# "torch") -> the largest allowed ratio minigrad / contender.
TARGETS: dict[tuple[str, str], float] = {
    ("moons-1000-f32", "numpy"): 1.15, ("moons-1000-f32", "torch"): 0.75,
    ("moons-32-f32", "numpy"): 1.6, ("moons-32-f32", "torch"): 0.4,
    ("lenet-f32", "numpy"): 1.1, ("lenet-f32", "torch"): 1.5,   # 1.1: issue 17 (was 1.05)
    ("mlp-784-f32", "numpy"): 1.05,
}


def sgd_step(model: Any, opt: Any, cross_entropy: Any) -> Any:
    """``train_step(x, y)``: one optimizer step of ``model`` on a batch, returning the loss
    unread (reading it would wait for a GPU). The minigrad and PyTorch contenders (and
    ``gpu_check``) all use this one function: minigrad's API is PyTorch's, line for line."""
    def train_step(x: Any, y: Any) -> Any:
        opt.zero_grad()
        loss = cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return train_step


def token_cross_entropy(cross_entropy: Any) -> Any:
    """The loss of a language model's logits (N, T, V) against the next tokens (N, T): both
    libraries' ``cross_entropy`` over the N*T positions."""
    def loss(logits: Any, targets: Any) -> Any:
        return cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
    return loss


def as_unit(case: Case, batches: list[Any], train_step: Any) -> Any:
    """What one timing of ``case`` calls: ``train_step(x, y)`` on the next batch (cycling), or
    on every batch in turn for a case whose unit is an epoch (it returns the last loss then).

    The minigrad and PyTorch contenders share it: their ``train_step`` is the same code line
    for line, and so is the loop around it.
    """
    if case.unit == "epoch":
        def epoch() -> object:
            loss: Any = None
            for x, y in batches:
                loss = train_step(x, y)
            return loss.item()
        return epoch

    state = {"i": 0}

    def step() -> object:
        x, y = batches[state["i"]]
        state["i"] = (state["i"] + 1) % len(batches)
        return train_step(x, y)

    return step


@dataclass
class Data:
    """The batches of one case (NumPy arrays) and how many there are per epoch."""

    batches: list[tuple[np.ndarray, np.ndarray]]
    n_classes: int


def _moons(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    from minigrad.data import moons
    return moons(n, noise=0.1, seed=seed)


def _digits_train() -> tuple[np.ndarray, np.ndarray]:
    """The training images of the digits, upsampled to (N, 1, 32, 32), and their labels."""
    from minigrad.data import (
        digits,  # stands alone: NumPy and scikit-learn, not the engine
    )
    (X, y), _ = digits(size=32)
    return X, y


def char_gpt() -> Any:
    """examples/char_gpt.py as a module (its GPT, text and batches)."""
    import importlib.util
    import sys
    from pathlib import Path
    if "char_gpt" not in sys.modules:
        path = Path(__file__).resolve().parent.parent / "examples" / "char_gpt.py"
        spec = importlib.util.spec_from_file_location("char_gpt", path)
        assert spec is not None and spec.loader is not None, path
        module = importlib.util.module_from_spec(spec)
        sys.modules["char_gpt"] = module
        spec.loader.exec_module(module)
    return sys.modules["char_gpt"]


def _gpt_model(case: Case, vocab: int, seed: int) -> Any:
    blocks, width, heads, context = case.sizes
    return char_gpt().GPT(vocab, context, width, heads, blocks, seed=seed, dtype=case.dtype)


def make_data(case: Case, seed: int = 0) -> Data:
    """The batches every contender of ``case`` trains on (fixed order, same for all)."""
    rng = np.random.default_rng(seed)
    if case.kind == "gpt":  # 8 batches of windows of the example's text: ids (B, T) -> next
        ex = char_gpt()
        ids, chars = ex.encode(ex.load_text(200_000))
        feed = ex.batches(ids, case.batch, case.sizes[3], seed)
        return Data([next(feed) for _ in range(8)], len(chars))
    if case.kind == "lenet":
        X, y = _digits_train()
        classes = 10
    elif case.sizes[0] == 2:
        X, y = _moons(1000, seed)
        classes = 2
    else:  # the big MLP is matmul-bound: random inputs are as good as images
        X = rng.standard_normal((8 * case.batch, case.sizes[0]))
        y = rng.integers(0, case.sizes[-1], 8 * case.batch)
        classes = case.sizes[-1]
    order = rng.permutation(len(X))
    X = np.ascontiguousarray(X[order], dtype=case.dtype)
    y = np.ascontiguousarray(y[order], dtype=np.int64)
    b = case.batch
    batches = [(X[i:i + b].copy(), y[i:i + b].copy()) for i in range(0, len(X) - b + 1, b)]
    if case.unit == "epoch" and len(X) % b:  # an epoch also trains on the last, short batch
        batches.append((X[len(X) - len(X) % b:].copy(), y[len(X) - len(X) % b:].copy()))
    return Data(batches, classes)


def init_params(case: Case, seed: int = 0) -> list[np.ndarray]:
    """Initial weights in PyTorch's layout and default init: weight (out, in), then bias.

    ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))`` for both, as ``torch.nn.Linear`` and ``Conv2d``.
    Convolution weights are (C_out, C_in, kh, kw). A GPT's are the example's, in its
    state dict's order (PyTorch's).
    """
    rng = np.random.default_rng(seed + 1)
    if case.kind == "gpt":  # the example's own initial weights, in state-dict order
        vocab = make_data(case, seed).n_classes
        return [np.asarray(v) for v in _gpt_model(case, vocab, seed).state_dict().values()]
    if case.kind == "lenet":
        shapes = [(6, 1, 5, 5), (16, 6, 5, 5), (120, 400), (84, 120), (10, 84)]
    else:
        shapes = [(o, i) for i, o in zip(case.sizes[:-1], case.sizes[1:])]
    params = []
    for shape in shapes:
        fan_in = int(np.prod(shape[1:]))
        bound = 1.0 / np.sqrt(fan_in)
        params.append(rng.uniform(-bound, bound, shape).astype(case.dtype))
        params.append(rng.uniform(-bound, bound, shape[0]).astype(case.dtype))
    return params


def save_inputs(case: Case, seed: int, path: str) -> None:
    """Write the batches and initial weights of ``case`` to ``path`` (.npz), made once.

    The runner does this before starting the workers, so they all read the very same arrays
    and none of them pays for importing scikit-learn.
    """
    data = make_data(case, seed)
    arrays: dict[str, Any] = {"n_classes": np.array(data.n_classes)}
    for i, (x, y) in enumerate(data.batches):
        arrays[f"x{i}"], arrays[f"y{i}"] = x, y
    for i, p in enumerate(init_params(case, seed)):
        arrays[f"p{i}"] = p
    np.savez(path, **arrays)


def load_inputs(path: str) -> tuple[Data, list[np.ndarray]]:
    """The batches and initial weights written by :func:`save_inputs`."""
    with np.load(path) as f:
        n_batches = sum(1 for k in f.files if k.startswith("x"))
        n_params = sum(1 for k in f.files if k.startswith("p"))
        batches = [(f[f"x{i}"], f[f"y{i}"]) for i in range(n_batches)]
        params = [f[f"p{i}"] for i in range(n_params)]
        return Data(batches, int(f["n_classes"])), params
