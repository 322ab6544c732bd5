"""The char-GPT of ``examples/char_gpt.py`` against the same model in PyTorch on the CPU.

    python -m bench.char_gpt_torch                  # 200 timed steps at the example's size
    python -m bench.char_gpt_torch --steps 50 --dtype float64

One thread each (``torch.set_num_threads(1)``, ``threadpoolctl`` for NumPy's BLAS), the same
initial weights (minigrad's state dict loaded into the PyTorch model unchanged: the script
first checks the two give the same logits), the same batches and the same AdamW, warm-up and
cosine schedule and clipping. The three runs -- minigrad eager, minigrad compiled
(``minigrad.compile``) and PyTorch (eager) -- go side by side, step by step, in an order that
turns at every step, each step timed in CPU time (``time.thread_time``), and the medians over
``--steps`` steps after ``--warmup-steps`` untimed ones are compared: milliseconds per step,
their ratios, and the median (and quartiles) of the per-step ratios, each the ratio of two
runs of the same step seconds apart: the figure least moved by other programs on the machine. The losses
of the three runs must agree (float32: to 1e-2 over a few hundred steps; float64: 1e-8).
"""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # before NumPy loads its BLAS (threadpoolctl may be absent)

import numpy as np  # noqa: E402 - after the thread count is set

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))


def one_blas_thread() -> Any:
    """A context that holds NumPy's BLAS to one thread (threadpoolctl), or does nothing where
    threadpoolctl is absent (the environment variables above then hold it)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return contextlib.nullcontext()
    return threadpool_limits(1)


def interleaved(steppers: dict[str, Callable[[Any, Any], float]], batches: list[Any],
                warmup: int) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Run every stepper on each batch in an order that turns at every batch (each run first
    in turn), each step timed in CPU time; the losses of all steps and the times of those after
    ``warmup``, per stepper."""
    losses: dict[str, list[float]] = {k: [] for k in steppers}
    times: dict[str, list[float]] = {k: [] for k in steppers}
    order = list(steppers)
    for k, (x, y) in enumerate(batches):
        for label in order[k % len(order):] + order[:k % len(order)]:
            t0 = time.thread_time()
            losses[label].append(steppers[label](x, y))
            if k >= warmup:
                times[label].append(time.thread_time() - t0)
    return losses, times


def torch_gpt(model: Any, args: argparse.Namespace) -> Any:
    """The example's GPT written with torch.nn, given ``model``'s state dict unchanged."""
    import torch
    from torch import nn

    class TorchGPT(nn.Module):
        def __init__(self, vocab: int) -> None:
            super().__init__()
            c = args.width
            self.context = args.context
            self.tok_emb = nn.Embedding(vocab, c)
            self.pos_emb = nn.Embedding(args.context, c)
            self.drop = nn.Dropout(args.dropout)
            self.blocks = nn.ModuleList([
                nn.TransformerEncoderLayer(c, args.heads, 4 * c, dropout=args.dropout,
                                           activation=nn.GELU(approximate="tanh"),
                                           batch_first=True, norm_first=True)
                for _ in range(args.layers)])
            self.ln_f = nn.LayerNorm(c)
            self.head = nn.Linear(c, vocab, bias=False)
            if args.tie:
                self.head.weight = self.tok_emb.weight

        def forward(self, ids: Any) -> Any:
            t = ids.shape[-1]
            x = self.drop(self.tok_emb(ids) + self.pos_emb.weight[:t])
            mask = torch.triu(torch.ones(t, t, dtype=torch.bool), 1)
            for block in self.blocks:
                x = block(x, src_mask=mask, is_causal=True)
            return self.head(self.ln_f(x))

    vocab = model.tok_emb.num_embeddings
    twin = TorchGPT(vocab).to(getattr(torch, args.dtype))
    twin.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in
                          model.state_dict().items()})  # strict: the same keys and shapes
    return twin


def torch_stepper(twin: Any, args: argparse.Namespace) -> Any:
    """One PyTorch training step (AdamW, the schedule, clipping) per call: the loss."""
    import torch
    opt = torch.optim.AdamW(twin.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    warmup = max(1, min(args.warmup, args.steps - 1))
    schedule = torch.optim.lr_scheduler.SequentialLR(opt, [
        torch.optim.lr_scheduler.LinearLR(opt, start_factor=1.0 / warmup, total_iters=warmup),
        torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=max(1, args.steps - warmup),
                                                   eta_min=args.lr / 10)],
        milestones=[warmup])

    def step(x: np.ndarray, y: np.ndarray) -> float:
        logits = twin(torch.from_numpy(x))
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                 torch.from_numpy(y).reshape(-1))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(twin.parameters(), args.clip)
        opt.step()
        schedule.step()
        return loss.item()
    return step


def minigrad_stepper(parts: dict[str, Any]) -> Any:
    def step(x: np.ndarray, y: np.ndarray) -> float:
        loss = float(parts["step"](x, y).item())
        parts["schedule"].step()
        return loss
    return step


def compare(args: argparse.Namespace) -> dict[str, Any]:
    """Run the three side by side, step by step (each step of each engine timed in CPU time,
    so that other processes on the machine weigh on all three alike); return the losses, the
    median seconds per step, and how closely PyTorch reproduces minigrad's logits."""
    import torch

    import char_gpt
    torch.set_num_threads(1)
    total = args.steps + args.warmup_steps
    ex = char_gpt.parse_args(["--dtype", args.dtype, "--layers", str(args.layers),
                              "--width", str(args.width), "--context", str(args.context),
                              "--heads", str(args.heads), "--batch", str(args.batch),
                              "--steps", str(total)] + (["--tie"] if args.tie else []))
    for key in ("dropout", "lr", "weight_decay", "warmup", "clip"):
        setattr(args, key, getattr(ex, key))
    text = char_gpt.load_text(ex.chars)
    results: dict[str, Any] = {}
    with one_blas_thread():
        ex.compile = False
        eager = char_gpt.build(text, ex)
        ex.compile = True
        compiled = char_gpt.build(text, ex)
        feed = char_gpt.batches(eager["train"], ex.batch, ex.context, ex.seed)
        data = [next(feed) for _ in range(total)]
        targs = argparse.Namespace(**{**vars(args), "steps": total})
        twin = torch_gpt(eager["model"], targs)  # the real load, on the untrained model
        with torch.no_grad():
            theirs = twin(torch.from_numpy(data[0][0])).numpy()
        ours = eager["model"](data[0][0]).numpy()
        results["load_max_difference"] = float(np.max(np.abs(theirs - ours)))
        steppers = {"minigrad eager": minigrad_stepper(eager),
                    "minigrad compiled": minigrad_stepper(compiled),
                    "pytorch": torch_stepper(twin, targs)}
        losses, times = interleaved(steppers, data, args.warmup_steps)
    for label in steppers:
        results[label] = (losses[label], float(np.median(times[label])))
        # each step's time over PyTorch's time of the same step, seconds apart
        paired = np.array(times[label]) / np.array(times["pytorch"])
        results[label + " paired"] = tuple(float(v) for v in
                                           np.percentile(paired, [50, 25, 75]))
    results["calls"] = dict(compiled["step"].calls)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=200, help="timed steps")
    parser.add_argument("--warmup-steps", type=int, default=20, help="untimed steps first")
    parser.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--context", type=int, default=64)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--tie", action="store_true")
    args = parser.parse_args(argv)
    r = compare(args)
    print(f"char-GPT: {args.layers} blocks, width {args.width}, context {args.context}, "
          f"batch {args.batch}, {args.dtype}, one thread each; median CPU time of {args.steps} "
          f"steps after {args.warmup_steps} untimed")
    print(f"  PyTorch loaded minigrad's state dict unchanged: logits differ by at most "
          f"{r['load_max_difference']:.1e}")
    torch_ms = r["pytorch"][1] * 1000
    tol = 1e-2 if args.dtype == "float32" else 1e-8
    ok = r["load_max_difference"] < (1e-4 if args.dtype == "float32" else 1e-12)
    for label in ("minigrad eager", "minigrad compiled", "pytorch"):
        losses, seconds = r[label]
        gap = float(np.max(np.abs(np.array(losses) - np.array(r["pytorch"][0]))))
        ok &= gap < tol
        median, low, high = r[label + " paired"]
        print(f"  {label:18s} {seconds * 1000:7.2f} ms/step  {seconds * 1000 / torch_ms:5.2f}x "
              f"PyTorch (paired: median {median:.2f}x, quartiles {low:.2f}-{high:.2f})   "
              f"final loss {np.mean(losses[-20:]):.4f}   |loss - PyTorch's| <= {gap:.1e}")
    print("agreement:", "ok" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
