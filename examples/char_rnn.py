"""Train a character-level LSTM language model with minigrad, and let it write.

    python examples/char_rnn.py                          # 3 epochs on 200,000 characters
    python examples/char_rnn.py --epochs 10 --plot loss.png --save char_rnn.npz
    python examples/char_rnn.py --smoke                  # a few seconds' run (CI)
    python examples/char_rnn.py --no-compile             # each step eager, not replayed

The model reads a text one character at a time and predicts the next one:
``Embedding(V, 32) -> LSTM(32, 128) -> Linear(128, V)``, trained with the softmax
cross-entropy of the next character (nats per character) and Adam, gradients clipped to norm 5.

The text is the help text of the Python documentation that ships with every CPython, the
``pydoc_data.topics`` module of the standard library (what ``help("for")`` prints), under
the Python Software Foundation License version 2 (https://docs.python.org/3/license.html).
It is read from the installed Python: nothing is downloaded and no text is in this repository.

Truncated backpropagation through time: the text is cut into ``--batch`` streams read side by
side, and each stream into chunks of ``--chunk`` characters. The LSTM's state flows from one
chunk to the next, but through ``detach()``: the gradient of a chunk stops at its first step,
so each backward pass covers ``--chunk`` steps and the graph of the chunk before is already
freed. Samples are printed after every epoch; ``--plot`` saves the loss curve.

Each chunk's training step is compiled (``minigrad.compile``: its first calls record the array
calls it makes, later calls replay them, with exactly the eager step's numbers); the state goes
from one chunk to the next as plain arrays, which is what cuts the graph. ``--no-compile`` runs
every step eagerly.
"""
from __future__ import annotations

import argparse
import math
import time
from typing import Any, Callable

import numpy as np
from tqdm import tqdm

import minigrad as mg
import minigrad.functional as F
from minigrad import nn, optim
from minigrad.nn.utils import clip_grad_norm_

SOURCE = ("pydoc_data.topics of the Python standard library (Python documentation, "
          "PSF License version 2)")


def load_text(chars: int) -> str:
    """The first ``chars`` characters of the Python help topics, in alphabetical order."""
    from pydoc_data.topics import topics
    text = "\n\n".join(topics[key].strip() for key in sorted(topics))
    return text[:chars]


class CharRNN(nn.Module):
    """Embedding -> LSTM -> Linear: logits of the next character at every step."""

    def __init__(self, vocab: int, embed: int, hidden: int, layers: int, seed: int,
                 dtype: str) -> None:
        super().__init__()
        rng = np.random.default_rng(seed)
        self.embed = nn.Embedding(vocab, embed, rng=rng, dtype=dtype)
        self.lstm = nn.LSTM(embed, hidden, num_layers=layers, rng=rng, dtype=dtype)
        self.head = nn.Linear(hidden, vocab, rng=rng, dtype=dtype)

    def forward(self, ids: Any, state: Any = None) -> tuple[mg.Tensor, Any]:
        """``ids`` (T, N) -> logits (T, N, vocab), and the LSTM state after the last step."""
        output, state = self.lstm(self.embed(ids), state)  # (T, N, hidden)
        return self.head(output), state


def streams(ids: np.ndarray, batch: int) -> np.ndarray:
    """Cut the text into ``batch`` equal streams read side by side: (length, batch)."""
    length = len(ids) // batch
    return ids[:length * batch].reshape(batch, length).T.copy()


def make_step(model: CharRNN, optimizer: Any, clip: float, compiled: bool = True
              ) -> Callable[..., tuple[mg.Tensor, mg.Tensor, mg.Tensor]]:
    """One chunk's training step, ``step(x, y, h, c) -> (loss, h_n, c_n)``: the forward pass
    from the LSTM state ``(h, c)`` (arrays (layers, batch, hidden)), backward, clipping and an
    optimizer step; compiled unless ``compiled`` is False."""
    def train_step(x: Any, y: Any, h: Any, c: Any) -> tuple[mg.Tensor, mg.Tensor, mg.Tensor]:
        logits, (h_n, c_n) = model(x, (mg.Tensor(h), mg.Tensor(c)))
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
        return loss, h_n, c_n
    return mg.compile(train_step) if compiled else train_step


def zero_state(args: argparse.Namespace) -> np.ndarray:
    """The LSTM state at the start of an epoch, ``h`` or ``c``: zeros (layers, batch, hidden)."""
    return np.zeros((args.layers, args.batch, args.hidden), dtype=args.dtype)


def train_epoch(step: Callable[..., Any], data: np.ndarray, chunk: int, zeros: np.ndarray,
                progress: Any = None) -> list[float]:
    """One pass over ``data`` (length, batch) in chunks with ``step`` (:func:`make_step`),
    from the state ``h = c = zeros``; returns the loss of every chunk."""
    losses = []
    h = c = zeros
    for start in range(0, data.shape[0] - 1, chunk):
        y = data[start + 1:start + chunk + 1]
        x = data[start:start + len(y)]
        loss, h_n, c_n = step(x, y, h, c)
        h, c = h_n.numpy(), c_n.numpy()  # truncated BPTT: the values go on, the graph stops
        losses.append(loss.item())
        if progress is not None:
            progress.update(1)
            progress.set_postfix(loss=f"{losses[-1]:.3f}")
    return losses


@mg.no_grad()
def sample(model: CharRNN, chars: list[str], start: str, length: int, temperature: float,
           rng: np.random.Generator) -> str:
    """Let the model write ``length`` characters after ``start``, one at a time."""
    index = {c: i for i, c in enumerate(chars)}
    ids = np.array([[index[c]] for c in start if c in index])  # (T, 1)
    logits, state = model(ids)
    out = []
    for _ in range(length):
        z = logits.numpy()[-1, 0] / temperature
        p = np.exp(z - z.max())
        next_id = rng.choice(len(chars), p=p / p.sum())
        out.append(chars[next_id])
        logits, state = model(np.array([[next_id]]), state)
    return start + "".join(out)


def build(text: str, args: argparse.Namespace) -> tuple[CharRNN, Any, np.ndarray, list[str]]:
    chars = sorted(set(text))
    ids = np.searchsorted(np.array(chars), np.array(list(text)))  # each character's index
    model = CharRNN(len(chars), args.embed, args.hidden, args.layers, args.seed, args.dtype)
    optimizer = optim.Adam(model.parameters(), lr=args.lr)
    return model, optimizer, streams(ids, args.batch), chars


def time_one_epoch(text: str, args: argparse.Namespace) -> tuple[float, float]:
    """Seconds and mean loss of one epoch in minigrad, compiled or not as ``args.compile`` says
    (for bench/torch_parity_rnn.py)."""
    model, optimizer, data, _ = build(text, args)
    step = make_step(model, optimizer, args.clip, args.compile)
    start = time.perf_counter()
    losses = train_epoch(step, data, args.chunk, zero_state(args))
    return time.perf_counter() - start, float(np.mean(losses))


def time_one_epoch_torch(text: str, args: argparse.Namespace) -> tuple[float, float]:
    """The same epoch in PyTorch on the CPU, from the same initial weights (its state dict)."""
    import torch
    from torch import nn as tnn

    model, _, data, chars = build(text, args)

    class TorchCharRNN(tnn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed = tnn.Embedding(len(chars), args.embed)
            self.lstm = tnn.LSTM(args.embed, args.hidden, num_layers=args.layers)
            self.head = tnn.Linear(args.hidden, len(chars))

        def forward(self, ids: Any, state: Any = None) -> Any:
            output, state = self.lstm(self.embed(ids), state)
            return self.head(output), state

    dtype = getattr(torch, args.dtype)
    twin = TorchCharRNN().to(dtype)
    twin.load_state_dict({k: torch.from_numpy(np.asarray(v)) for k, v in
                          model.state_dict().items()})  # minigrad's names are PyTorch's
    optimizer = torch.optim.Adam(twin.parameters(), lr=args.lr)
    tensor_data = torch.from_numpy(data)
    losses, state = [], None
    start = time.perf_counter()
    for t in range(0, data.shape[0] - 1, args.chunk):
        y = tensor_data[t + 1:t + args.chunk + 1]
        x = tensor_data[t:t + len(y)]
        if state is not None:
            state = (state[0].detach(), state[1].detach())
        logits, state = twin(x, state)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, len(chars)), y.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(twin.parameters(), args.clip)
        optimizer.step()
        losses.append(loss.item())
    return time.perf_counter() - start, float(np.mean(losses))


def plot_losses(losses: list[float], chunks_per_epoch: int, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5), dpi=100)
    ax.plot(losses, lw=0.8, label="chunk")
    if len(losses) >= chunks_per_epoch > 1:
        kernel = np.ones(chunks_per_epoch) / chunks_per_epoch
        ax.plot(np.arange(chunks_per_epoch - 1, len(losses)),
                np.convolve(losses, kernel, mode="valid"), lw=2, label="mean over an epoch")
    ax.set_xlabel("chunk (one optimizer step each)")
    ax.set_ylabel("cross-entropy (nats / character)")
    ax.set_title("char-RNN on the Python help topics")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    # Alike only: every example declares its own options the same way (duplicates pairs these
    # add_argument lines with train_moons.py's and export_c.py's); the options differ.
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--chars", type=int, default=200_000, help="characters of text used")
    parser.add_argument("--epochs", type=int, default=3, help="passes over the text")
    parser.add_argument("--embed", type=int, default=32, help="embedding size")
    parser.add_argument("--hidden", type=int, default=128, help="LSTM hidden size")
    parser.add_argument("--layers", type=int, default=1, help="LSTM layers")
    parser.add_argument("--batch", type=int, default=32, help="streams read side by side")
    parser.add_argument("--chunk", type=int, default=50,
                        help="steps of truncated backpropagation through time")
    parser.add_argument("--lr", type=float, default=3e-3, help="Adam's learning rate")
    parser.add_argument("--clip", type=float, default=5.0, help="gradient norm clipped to this")
    parser.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    parser.add_argument("--seed", type=int, default=0, help="seed of the weights and samples")
    parser.add_argument("--temperature", type=float, default=0.8, help="of the samples")
    parser.add_argument("--sample-length", type=int, default=200, help="characters per sample")
    parser.add_argument("--threads", type=int, default=1,
                        help="BLAS threads (these matrices are small: one is usually fastest)")
    parser.add_argument("--no-compile", dest="compile", action="store_false",
                        help="run each chunk's step eagerly instead of replaying a compiled one")
    parser.add_argument("--plot", metavar="PNG", help="save the loss curve here")
    parser.add_argument("--save", metavar="NPZ", help="save the trained state dict here")
    parser.add_argument("--smoke", action="store_true",
                        help="a quick run for CI: 4,000 characters, hidden 48, 3 epochs")
    args = parser.parse_args(argv)
    if args.smoke:
        args.chars, args.hidden, args.embed, args.epochs = 4_000, 48, 16, 3
        args.batch, args.chunk, args.lr, args.sample_length = 8, 25, 1e-2, 80
    return args


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # then NumPy uses its default number of threads
        return run(args)
    with threadpool_limits(args.threads):
        return run(args)


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Train as ``args`` say: print, plot and save; return the losses and timings."""
    text = load_text(args.chars)
    model, optimizer, data, chars = build(text, args)
    step = make_step(model, optimizer, args.clip, args.compile)
    chunks = math.ceil((data.shape[0] - 1) / args.chunk)
    print(f"text: {len(text):,} characters, {len(chars)} distinct, from {SOURCE}")
    print(f"model: {model}")
    print(f"a character chosen at random scores ln({len(chars)}) = {math.log(len(chars)):.3f} "
          f"nats")
    rng = np.random.default_rng(args.seed)
    losses: list[float] = []
    seconds = []
    for epoch in range(1, args.epochs + 1):
        start = time.perf_counter()
        with tqdm(total=chunks, desc=f"epoch {epoch}/{args.epochs}", unit="chunk") as progress:
            epoch_losses = train_epoch(step, data, args.chunk, zero_state(args), progress)
        seconds.append(time.perf_counter() - start)
        losses += epoch_losses
        print(f"epoch {epoch}: mean loss {np.mean(epoch_losses):.3f} nats/char, "
              f"{seconds[-1]:.1f} s")
        print("  sample: " + repr(sample(model, chars, "The ", args.sample_length,
                                         args.temperature, rng)))
    final = float(np.mean(losses[-chunks:]))
    print(f"final loss {final:.3f} nats/char (last epoch's mean)")
    print(f"seconds per epoch {np.mean(seconds):.1f} ({'compiled' if args.compile else 'eager'} "
          f"steps)")
    if args.compile:
        print(f"compiled step: {step.calls}")
    if args.plot:
        plot_losses(losses, chunks, args.plot)
        print(f"loss curve saved to {args.plot}")
    if args.save:
        mg.save(model.state_dict(), args.save)
        print(f"model saved to {args.save}")
    return {"losses": losses, "final": final, "vocab": len(chars),
            "seconds_per_epoch": float(np.mean(seconds)),
            "calls": dict(step.calls) if args.compile else None}


if __name__ == "__main__":
    main()
