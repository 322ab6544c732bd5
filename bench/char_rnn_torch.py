"""The char-RNN of ``examples/char_rnn.py`` against the same model in PyTorch on the CPU, eager
and compiled, chunk by chunk.

    python -m bench.char_rnn_torch                  # 150 timed chunks at the example's size
    python -m bench.char_rnn_torch --steps 50 --dtype float64

One thread each, the same initial weights (minigrad's state dict loaded into ``torch.nn.LSTM``
unchanged), the same chunks of the same 32 streams, the same Adam and clipping, truncated
backpropagation through time (the state's values carried from chunk to chunk, its graph cut).
The three runs -- minigrad eager, minigrad compiled (``minigrad.compile`` of the example's
step: the state goes in and comes out as arrays) and PyTorch -- go side by side, chunk by chunk,
in an order that turns at every chunk, each chunk timed in CPU time (``time.thread_time``).
Printed: the median milliseconds per chunk, the ratio of the medians, and the median of the
per-chunk ratios (each ratio of two runs of the same chunk, seconds apart: the figure least
moved by the other programs on the machine). The losses must agree (float32: 1e-3; float64:
1e-8).
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any, Callable

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # before NumPy loads its BLAS (threadpoolctl may be absent)

import numpy as np  # noqa: E402 - after the thread count is set

from .char_gpt_torch import interleaved, one_blas_thread  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))


run_step: list[Any] = []  # the steps made by minigrad_stepper (the compiled one's calls)


def minigrad_stepper(model: Any, optimizer: Any, clip: float, compiled: bool,
                     shape: tuple[int, int, int]) -> Callable[[Any, Any], float]:
    """One minigrad chunk per call (the example's step, ``char_rnn.make_step``): the loss; the
    state is kept between calls as plain arrays, (layers, batch, hidden) zeros at first."""
    import char_rnn

    step = char_rnn.make_step(model, optimizer, clip, compiled)
    run_step.append(step)
    dtype = model.head.weight.dtype
    state = [np.zeros(shape, dtype=dtype), np.zeros(shape, dtype=dtype)]

    def run(x: Any, y: Any) -> float:
        loss, h_n, c_n = step(x, y, state[0], state[1])
        state[0], state[1] = h_n.numpy(), c_n.numpy()  # the values; the graph is cut
        return float(loss.item())
    return run


def torch_stepper(model: Any, args: argparse.Namespace, vocab: int) -> Callable[[Any, Any], float]:
    """The same chunk in PyTorch: ``examples/char_rnn.py``'s twin, from ``model``'s weights."""
    import torch
    from torch import nn as tnn

    class TorchCharRNN(tnn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed = tnn.Embedding(vocab, args.embed)
            self.lstm = tnn.LSTM(args.embed, args.hidden, num_layers=args.layers)
            self.head = tnn.Linear(args.hidden, vocab)

        def forward(self, ids: Any, state: Any) -> Any:
            output, state = self.lstm(self.embed(ids), state)
            return self.head(output), state

    twin = TorchCharRNN().to(getattr(torch, args.dtype))
    twin.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in
                          model.state_dict().items()})  # strict: the same keys and shapes
    optimizer = torch.optim.Adam(twin.parameters(), lr=args.lr)
    zeros = torch.zeros(args.layers, args.batch, args.hidden, dtype=getattr(torch, args.dtype))
    state = [(zeros, zeros.clone())]

    def run(x: Any, y: Any) -> float:
        logits, (h, c) = twin(torch.from_numpy(x), state[0])
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, vocab),
                                                 torch.from_numpy(y).reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(twin.parameters(), args.clip)
        optimizer.step()
        state[0] = (h.detach(), c.detach())
        return float(loss.item())
    return run


def compare(args: argparse.Namespace) -> dict[str, Any]:
    """Run the three chunk by chunk; the losses and CPU seconds of every chunk of each."""
    import torch

    import char_rnn
    torch.set_num_threads(1)
    ex = char_rnn.parse_args(["--dtype", args.dtype])
    for key in ("embed", "hidden", "layers", "batch", "chunk", "lr", "clip"):
        setattr(args, key, getattr(ex, key))
    text = char_rnn.load_text(ex.chars)
    with one_blas_thread():
        eager, opt_e, data, chars = char_rnn.build(text, ex)
        compiled, opt_c, _, _ = char_rnn.build(text, ex)
        shape = (ex.layers, ex.batch, ex.hidden)
        steppers = {"minigrad eager": minigrad_stepper(eager, opt_e, ex.clip, False, shape),
                    "minigrad compiled": minigrad_stepper(compiled, opt_c, ex.clip, True, shape),
                    "pytorch": torch_stepper(eager, args, len(chars))}
        total = args.steps + args.warmup_steps
        # the example's text holds 124 chunks; more steps go round it again (the state
        # carried on, as in the example's next epoch)
        starts = range(0, len(data) - ex.chunk, ex.chunk)
        chunks = [(data[t:t + ex.chunk], data[t + 1:t + ex.chunk + 1])
                  for t in (starts[k % len(starts)] for k in range(total))]
        losses, times = interleaved(steppers, chunks, args.warmup_steps)
    return {"losses": losses, "times": times, "calls": dict(run_step[-1].calls)}


def report(r: dict[str, Any], args: argparse.Namespace, what: str) -> bool:
    """Print the medians and the paired ratios; whether the losses agree."""
    torch_t = np.array(r["times"]["pytorch"])
    tol = 1e-3 if args.dtype == "float32" else 1e-8
    ok = True
    for label in ("minigrad eager", "minigrad compiled", "pytorch"):
        t = np.array(r["times"][label])
        gap = float(np.max(np.abs(np.array(r["losses"][label])
                                  - np.array(r["losses"]["pytorch"]))))
        ok &= gap < tol
        paired = t / torch_t
        print(f"  {label:18s} {np.median(t) * 1000:7.2f} ms/{what}  "
              f"{np.median(t) / np.median(torch_t):5.2f}x PyTorch (paired: median "
              f"{np.median(paired):.2f}x, quartiles {np.percentile(paired, 25):.2f}-"
              f"{np.percentile(paired, 75):.2f})   |loss - PyTorch's| <= {gap:.1e}")
    print("agreement:", "ok" if ok else "MISMATCH")
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=150, help="timed chunks")
    parser.add_argument("--warmup-steps", type=int, default=10, help="untimed chunks first")
    parser.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    args = parser.parse_args(argv)
    r = compare(args)
    print(f"char-RNN: LSTM hidden {args.hidden}, embedding {args.embed}, {args.layers} "
          f"layer(s), batch {args.batch}, chunks of {args.chunk}, {args.dtype}, one thread "
          f"each; median CPU time of {args.steps} chunks after {args.warmup_steps} untimed")
    ok = report(r, args, "chunk")
    print("compiled step:", r["calls"])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
