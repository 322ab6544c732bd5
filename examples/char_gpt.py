"""Train a character-level GPT with minigrad, and let it write.

    python examples/char_gpt.py                          # 1,500 steps, about a minute
    python examples/char_gpt.py --steps 5000 --plot loss.png --save char_gpt.npz
    python examples/char_gpt.py --smoke                  # a few seconds' run (CI)

The model is a small GPT (the decoder-only Transformer of GPT-2 and nanoGPT): each character
is a token, embedded (``tok_emb``) and given the embedding of its position (``pos_emb``);
``--layers`` pre-norm blocks follow, each causal self-attention then an MLP, each with a
residual connection::

    x = x + attention(layer_norm(x))     # every position looks at itself and those before
    x = x + mlp(layer_norm(x))           # Linear(C, 4C) -> GELU -> Linear(4C, C)

and a last layer norm and a linear head give the logits of the next character at every
position. The blocks are ``nn.TransformerEncoderLayer(norm_first=True, batch_first=True)``
with the causal mask and GELU's tanh form (GPT-2's), so the state dict has PyTorch's names:
it loads unchanged into the same model written with ``torch.nn`` (``bench/char_gpt_torch.py``
does that and compares the two, step for step). ``--tie`` shares the head's weight with the
token embedding (GPT-2's weight tying).

Training: AdamW, the learning rate warmed up linearly for ``--warmup`` steps and then annealed
along a cosine (``LinearLR`` and ``CosineAnnealingLR`` joined by ``SequentialLR``), gradients
clipped to norm ``--clip``. Each step is compiled (``minigrad.compile``: the first calls record
the step's array operations, the rest replay them, bit for bit the same numbers as the eager
engine); ``--no-compile`` runs it eagerly. Dropout is 0 by default, so every step can replay.

The text is the Python help topics that ship with CPython, as in ``char_rnn.py`` (the
``pydoc_data.topics`` module, PSF License version 2): nothing is downloaded. Every
``--eval-every`` steps the loss on held-out text (the last tenth) is measured and a sample is
printed; ``--plot`` saves both loss curves. ``--onnx FILE`` exports the trained model
(``minigrad.export.onnx``, which this script teaches the GPT: ``onnx_gpt``) for windows of
``--context`` characters.
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import numpy as np
from tqdm import tqdm

import minigrad as mg
import minigrad.functional as F
from minigrad import nn, optim
from minigrad.export.onnx import register as register_onnx
from minigrad.nn.utils import clip_grad_norm_

sys.path.insert(0, str(Path(__file__).resolve().parent))
from char_rnn import SOURCE, load_text  # noqa: E402  the same offline text


class GPT(nn.Module):
    """Token and position embeddings, pre-norm Transformer blocks (causal), a norm, a head.

    ``model(ids)`` with ``ids`` (N, T) integer tokens, T <= ``context``, gives the logits
    (N, T, vocab) of the next token at every position.
    """

    def __init__(self, vocab: int, context: int, width: int, heads: int, layers: int,
                 dropout: float = 0.0, tie: bool = False, seed: int = 0,
                 dtype: str = "float32") -> None:
        super().__init__()
        rng = np.random.default_rng(seed)
        self.context, self.tie = context, tie
        self.tok_emb = nn.Embedding(vocab, width, rng=rng, dtype=dtype)
        self.pos_emb = nn.Embedding(context, width, rng=rng, dtype=dtype)
        for emb in (self.tok_emb, self.pos_emb):  # GPT-2's small start: N(0, 0.02)
            emb.weight.data = emb.weight.data * 0.02
        self.drop = nn.Dropout(dropout, rng=rng)
        self.blocks = nn.ModuleList([
            nn.TransformerEncoderLayer(width, heads, 4 * width, dropout=dropout,
                                       activation=nn.GELU(approximate="tanh"),
                                       batch_first=True, norm_first=True, rng=rng, dtype=dtype)
            for _ in range(layers)])
        self.ln_f = nn.LayerNorm(width, dtype=dtype)
        self.head = nn.Linear(width, vocab, bias=False, rng=rng, dtype=dtype)
        if tie:
            self.head.weight = self.tok_emb.weight

    def forward(self, ids: Any) -> mg.Tensor:
        t = ids.shape[-1]
        if t > self.context:
            raise ValueError(f"GPT: at most {self.context} tokens (the context); got {t}")
        x = self.drop(self.tok_emb(ids) + self.pos_emb.weight[:t])  # (N, T, C)
        xp = x._xp
        mask = ~F.causal_mask(xp, t)  # True above the diagonal: may not attend
        for block in self.blocks:
            x = block(x, src_mask=mask, is_causal=True)
        return self.head(self.ln_f(x))  # (N, T, vocab)

    def state_dict(self) -> dict[str, Any]:
        """PyTorch's: a tied head's weight is listed under both names."""
        state = super().state_dict()
        if self.tie:
            state["head.weight"] = self.head.weight.data
        return state

    def load_state_dict(self, state_dict: dict[str, Any], strict: bool = True) -> Any:
        if self.tie and "head.weight" in state_dict:
            state_dict = {k: v for k, v in state_dict.items() if k != "head.weight"}
        return super().load_state_dict(state_dict, strict)


def onnx_gpt(graph: Any, path: str, model: GPT, ids: str, in_shape: tuple[int, ...],
             out_shape: tuple[int, ...]) -> str:
    """The GPT's forward in ONNX, for ``minigrad.export.onnx.export(model, ids, path)``: its
    layers' translations, the blocks with the causal mask (for the example's length T)."""
    t, c = in_shape[-1], model.tok_emb.embedding_dim
    shape = tuple(in_shape) + (c,)
    x = graph.translate("tok_emb", model.tok_emb, ids, in_shape, shape)
    pos = graph.node("Slice", [graph.initializer(model.pos_emb.weight),
                               graph.constant_int64("pos_emb.starts", [0]),
                               graph.constant_int64("pos_emb.ends", [t]),
                               graph.constant_int64("pos_emb.axes", [0])], "pos_emb")
    x = graph.node("Add", [x, pos], path)  # (N, T, C)
    for i, block in enumerate(model.blocks):
        x = graph.translate(f"blocks.{i}", block, x, shape, shape, causal=True)
    x = graph.translate("ln_f", model.ln_f, x, shape, shape)
    return graph.translate("head", model.head, x, shape, out_shape)


register_onnx(GPT, onnx_gpt, integer_input=True)


def encode(text: str) -> tuple[np.ndarray, list[str]]:
    """The text as token ids (int64) and the characters they stand for."""
    chars = sorted(set(text))
    return np.searchsorted(np.array(chars), np.array(list(text))).astype(np.int64), chars


def batches(ids: np.ndarray, batch: int, context: int, seed: int) -> Iterator[tuple[Any, Any]]:
    """Endless random windows of the text: inputs (N, T) and the next characters (N, T)."""
    rng = np.random.default_rng(seed)
    offsets = np.arange(context)
    while True:
        start = rng.integers(0, len(ids) - context - 1, size=batch)[:, None]
        yield ids[start + offsets], ids[start + offsets + 1]


def build(text: str, args: argparse.Namespace) -> dict[str, Any]:
    """Model, optimizer, schedule, the compiled (or eager) step and the data of a run."""
    ids, chars = encode(text)
    cut = int(len(ids) * 0.9)
    model = GPT(len(chars), args.context, args.width, args.heads, args.layers, args.dropout,
                args.tie, args.seed, args.dtype)
    params = list(model.parameters())
    optimizer = optim.AdamW(params, lr=args.lr, weight_decay=args.weight_decay)
    warmup = max(1, min(args.warmup, args.steps - 1))
    schedule = optim.lr_scheduler.SequentialLR(optimizer, [
        optim.lr_scheduler.LinearLR(optimizer, start_factor=1.0 / warmup, total_iters=warmup),
        optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=max(1, args.steps - warmup),
                                             eta_min=args.lr / 10)], milestones=[warmup])
    vocab = len(chars)

    def train_step(x: np.ndarray, y: np.ndarray) -> mg.Tensor:
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, vocab), y.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        clip_grad_norm_(params, args.clip)
        optimizer.step()
        return loss

    step = mg.compile(train_step) if args.compile else train_step
    return {"model": model, "optimizer": optimizer, "schedule": schedule, "step": step,
            "chars": chars, "train": ids[:cut], "valid": ids[cut:], "eager_step": train_step}


@mg.no_grad()
def evaluate(model: GPT, ids: np.ndarray, args: argparse.Namespace) -> float:
    """The mean loss on ``--eval-batches`` fixed windows of held-out text."""
    data = batches(ids, args.batch, args.context, seed=12345)
    losses = []
    for _ in range(args.eval_batches):
        x, y = next(data)
        logits = model(x)
        losses.append(F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                      y.reshape(-1)).item())
    return float(np.mean(losses))


@mg.no_grad()
def sample(model: GPT, chars: list[str], start: str, length: int, temperature: float,
           rng: np.random.Generator) -> str:
    """Let the model write ``length`` characters after ``start``, one at a time (the last
    ``context`` characters are its window)."""
    index = {c: i for i, c in enumerate(chars)}
    ids = [index[c] for c in start if c in index]
    for _ in range(length):
        window = np.array([ids[-model.context:]], dtype=np.int64)
        z = model(window).numpy()[0, -1].astype(np.float64) / temperature
        p = np.exp(z - z.max())
        ids.append(int(rng.choice(len(chars), p=p / p.sum())))
    return start + "".join(chars[i] for i in ids[len(start):])


def plot_losses(train: list[float], valid: list[tuple[int, float]], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5), dpi=100)
    ax.plot(train, lw=0.6, alpha=0.6, label="training batch")
    if valid:
        ax.plot(*zip(*valid), "o-", lw=2, label="held-out text")
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy (nats / character)")
    ax.set_title("char-GPT on the Python help topics")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--chars", type=int, default=200_000, help="characters of text used")
    parser.add_argument("--steps", type=int, default=1500, help="optimizer steps")
    parser.add_argument("--context", type=int, default=64, help="tokens the model sees")
    parser.add_argument("--width", type=int, default=64, help="embedding size C")
    parser.add_argument("--heads", type=int, default=4, help="attention heads")
    parser.add_argument("--layers", type=int, default=2, help="Transformer blocks")
    parser.add_argument("--dropout", type=float, default=0.0,
                        help="dropout (above 0 the step runs eagerly: random masks)")
    parser.add_argument("--tie", action="store_true", help="tie the head to the embedding")
    parser.add_argument("--batch", type=int, default=32, help="windows per step")
    parser.add_argument("--lr", type=float, default=3e-3, help="peak learning rate")
    parser.add_argument("--weight-decay", type=float, default=0.01, help="AdamW's decay")
    parser.add_argument("--warmup", type=int, default=100, help="steps of linear warm-up")
    parser.add_argument("--clip", type=float, default=1.0, help="gradient norm clipped to this")
    parser.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    parser.add_argument("--seed", type=int, default=0, help="seed of weights, data, samples")
    parser.add_argument("--no-compile", dest="compile", action="store_false",
                        help="run each step eagerly instead of replaying a compiled one")
    parser.add_argument("--eval-every", type=int, default=250, help="steps between samples")
    parser.add_argument("--eval-batches", type=int, default=8, help="held-out batches")
    parser.add_argument("--temperature", type=float, default=0.8, help="of the samples")
    parser.add_argument("--sample-length", type=int, default=200, help="characters per sample")
    parser.add_argument("--threads", type=int, default=1,
                        help="BLAS threads (these matrices are small: one is usually fastest)")
    parser.add_argument("--plot", metavar="PNG", help="save the loss curves here")
    parser.add_argument("--save", metavar="NPZ", help="save the trained state dict here")
    parser.add_argument("--onnx", metavar="FILE", help="export the trained model to ONNX here")
    parser.add_argument("--smoke", action="store_true",
                        help="a quick run for CI: 20,000 characters, width 32, context 32, "
                             "120 steps")
    args = parser.parse_args(argv)
    if args.smoke:
        args.chars, args.steps, args.context, args.width = 20_000, 120, 32, 32
        args.batch, args.warmup, args.eval_every, args.eval_batches = 16, 10, 60, 2
        args.lr, args.sample_length = 1e-2, 60
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
    parts = build(text, args)
    model, chars, step, schedule = parts["model"], parts["chars"], parts["step"], \
        parts["schedule"]
    n_params = sum(p.size for p in model.parameters())
    print(f"text: {len(text):,} characters, {len(chars)} distinct, from {SOURCE}")
    print(f"model: GPT, {args.layers} blocks, width {args.width}, {args.heads} heads, context "
          f"{args.context}, {n_params:,} parameters ({args.dtype}"
          f"{', tied head' if args.tie else ''}); "
          f"{'compiled' if args.compile else 'eager'} steps")
    print(f"a character chosen at random scores ln({len(chars)}) = {math.log(len(chars)):.3f} "
          f"nats")
    rng = np.random.default_rng(args.seed)
    data = batches(parts["train"], args.batch, args.context, args.seed)
    losses: list[float] = []
    valid: list[tuple[int, float]] = []
    samples: list[str] = []
    start = time.perf_counter()
    with tqdm(total=args.steps, desc="training", unit="step") as progress:
        for k in range(1, args.steps + 1):
            x, y = next(data)
            losses.append(float(step(x, y).item()))
            schedule.step()
            progress.update(1)
            progress.set_postfix(loss=f"{losses[-1]:.3f}", lr=f"{parts['optimizer'].lr:.1e}")
            if k % args.eval_every == 0 or k == args.steps:
                valid.append((k, evaluate(model, parts["valid"], args)))
                samples.append(sample(model, chars, "The ", args.sample_length,
                                      args.temperature, rng))
                tqdm.write(f"step {k}: training loss {np.mean(losses[-20:]):.3f}, held-out "
                           f"{valid[-1][1]:.3f} nats/char")
                tqdm.write("  sample: " + repr(samples[-1]))
    seconds = time.perf_counter() - start
    final = float(np.mean(losses[-20:]))
    print(f"final training loss {final:.3f} nats/char (mean of the last 20 steps), held-out "
          f"{valid[-1][1]:.3f}")
    print(f"{seconds / args.steps * 1000:.1f} ms per step (evaluation and samples included)")
    if args.compile:
        print(f"compiled step: {step.calls}")
    if args.plot:
        plot_losses(losses, valid, args.plot)
        print(f"loss curves saved to {args.plot}")
    if args.save:
        mg.save(model.state_dict(), args.save)
        print(f"model saved to {args.save}")
    if args.onnx:
        from minigrad.export.onnx import export
        window = np.zeros((1, args.context), dtype=np.int64)
        export(model, window, args.onnx, input_name="ids", output_name="logits")
        print(f"ONNX model (ids (batch, {args.context}) -> logits) written to {args.onnx}")
    return {"losses": losses, "final": final, "valid": valid, "samples": samples,
            "vocab": len(chars), "model": model,
            "calls": dict(step.calls) if args.compile else None}


if __name__ == "__main__":
    main()
