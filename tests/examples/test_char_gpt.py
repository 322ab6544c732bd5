"""examples/char_gpt.py: it learns in smoke mode, writes samples, draws its loss curves, saves a
state dict with PyTorch's keys and shapes, has a --help, and its compiled step is the eager one
bit for bit while replaying."""
from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np

import minigrad as mg
from minigrad import optim
from tests.support.examples import load_example

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "char_gpt.py"

# The state dict of the smoke model written with torch.nn (bench/char_gpt_torch.py's TorchGPT
# with vocab 86, width 32, context 32, 2 blocks; torch 2.13.0): keys, in order, and shapes.
BLOCK = [("self_attn.in_proj_weight", (96, 32)), ("self_attn.in_proj_bias", (96,)),
         ("self_attn.out_proj.weight", (32, 32)), ("self_attn.out_proj.bias", (32,)),
         ("linear1.weight", (128, 32)), ("linear1.bias", (128,)),
         ("linear2.weight", (32, 128)), ("linear2.bias", (32,)),
         ("norm1.weight", (32,)), ("norm1.bias", (32,)), ("norm2.weight", (32,)),
         ("norm2.bias", (32,))]
TORCH_STATE_DICT = ([("tok_emb.weight", (86, 32)), ("pos_emb.weight", (32, 32))]
                    + [(f"blocks.{i}.{k}", s) for i in range(2) for k, s in BLOCK]
                    + [("ln_f.weight", (32,)), ("ln_f.bias", (32,)), ("head.weight", (86, 32))])


def load():
    return load_example("char_gpt")


def test_smoke_run_learns_writes_and_saves_pytorchs_state_dict(tmp_path, capsys):
    char_gpt = load()
    png, npz = tmp_path / "loss.png", tmp_path / "model.npz"
    result = char_gpt.main(["--smoke", "--plot", str(png), "--save", str(npz)])
    out, err = capsys.readouterr()
    guessing = math.log(result["vocab"])
    assert result["losses"][0] > guessing - 0.3  # it starts at about random guessing ...
    assert result["final"] < guessing - 1.5  # ... and learns (about 2.6 vs 4.45 nats)
    assert result["valid"][-1][1] < guessing - 1.3  # on held-out text too
    assert out.count("sample: 'The ") == 2 and "pydoc_data.topics" in out
    assert "training" in err and "120/120" in err  # the tqdm progress bar
    assert result["calls"]["replayed"] >= 110, result["calls"]  # compiled, replaying
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    state = mg.load(npz)
    assert [(k, tuple(v.shape)) for k, v in state.items()] == TORCH_STATE_DICT
    again = char_gpt.GPT(86, 32, 32, 4, 2, seed=5)
    again.load_state_dict(state)  # loads back; and the logits are the trained model's
    x = np.arange(12).reshape(2, 6) % 86
    np.testing.assert_array_equal(again(x).numpy(), result["model"](x).numpy())


def test_tied_weights_are_one_parameter_listed_under_both_names():
    char_gpt = load()
    model = char_gpt.GPT(10, 8, 16, 2, 1, tie=True, seed=0)
    assert model.head.weight is model.tok_emb.weight
    assert sum(1 for _ in model.parameters()) == len(model.state_dict()) - 1
    state = model.state_dict()
    assert list(state)[-1] == "head.weight" and state["head.weight"] is state["tok_emb.weight"]
    other = char_gpt.GPT(10, 8, 16, 2, 1, tie=True, seed=1)
    other.load_state_dict(state)
    assert other.head.weight is other.tok_emb.weight
    np.testing.assert_array_equal(other.head.weight.numpy(), model.tok_emb.weight.numpy())


def test_the_model_is_causal_and_refuses_a_long_input():
    char_gpt = load()
    model = char_gpt.GPT(10, 8, 16, 2, 2, seed=0, dtype="float64")
    x = np.array([[1, 2, 3, 4, 5, 6]])
    y = x.copy()
    y[0, -1] = 9
    a, b = model(x).numpy(), model(y).numpy()
    np.testing.assert_array_equal(a[0, :-1], b[0, :-1])
    assert not np.array_equal(a[0, -1], b[0, -1])
    try:
        model(np.zeros((1, 9), dtype=np.int64))
    except ValueError as e:
        assert "at most 8 tokens" in str(e)
    else:
        raise AssertionError("a window longer than the context was accepted")


def test_a_compiled_gpt_step_is_the_eager_step_bit_for_bit_and_replays():
    """Two copies from the same seed, one eager and one compiled, under AdamW, the warm-up and
    cosine schedule (stepped outside the step) and clipping: after every one of 10 calls the
    loss, every parameter and every gradient are the same bits, and >= 7 calls replayed."""
    char_gpt = load()
    args = char_gpt.parse_args(["--smoke", "--width", "16", "--context", "8", "--heads", "2",
                                "--steps", "10", "--warmup", "3", "--clip", "0.5"])
    text = char_gpt.load_text(args.chars)
    args.compile = False
    eager = char_gpt.build(text, args)
    args.compile = True
    compiled = char_gpt.build(text, args)
    feed = char_gpt.batches(eager["train"], 4, 8, seed=0)
    pa, pb = list(eager["model"].parameters()), list(compiled["model"].parameters())
    for k in range(10):
        x, y = next(feed)
        la, lb = eager["step"](x, y), compiled["step"](x, y)
        eager["schedule"].step()
        compiled["schedule"].step()
        assert la.numpy().tobytes() == lb.numpy().tobytes(), f"call {k}: loss"
        for i, (p, q) in enumerate(zip(pa, pb)):
            assert p.numpy().tobytes() == q.numpy().tobytes(), f"call {k}: parameter {i}"
            assert np.asarray(p.grad).tobytes() == np.asarray(q.grad).tobytes(), \
                f"call {k}: gradient {i}"
    assert compiled["step"].calls["replayed"] >= 7, compiled["step"].calls
    assert isinstance(eager["optimizer"], optim.AdamW)
    assert eager["optimizer"].lr != args.lr  # the schedule moved it


def test_help():
    out = subprocess.run([sys.executable, str(SCRIPT), "--help"], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0
    for option in ("--smoke", "--save", "--plot", "--tie", "--no-compile", "--warmup"):
        assert option in out.stdout
