"""examples/char_rnn.py in smoke mode: it learns (the loss falls well below guessing), writes
samples, draws its loss curve, saves a state dict with PyTorch's names, and has a --help; its
steps are compiled and replay, with the eager run's losses to the bit (``--no-compile``)."""
from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np

import minigrad as mg
from tests.support.examples import load_example

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "char_rnn.py"


def load():
    return load_example("char_rnn")


def test_smoke_run_learns_and_writes(tmp_path, capsys):
    char_rnn = load()
    png, npz = tmp_path / "loss.png", tmp_path / "model.npz"
    result = char_rnn.main(["--smoke", "--plot", str(png), "--save", str(npz)])
    out, err = capsys.readouterr()
    guessing = math.log(result["vocab"])
    assert result["losses"][0] > guessing - 0.3  # it starts at about random guessing ...
    assert result["final"] < guessing - 1.0  # ... and learns (about 2.6 vs 4.0 nats)
    assert np.mean(result["losses"][-5:]) < np.mean(result["losses"][:5]) - 1.0
    assert out.count("sample: 'The ") == 3  # one sample per epoch
    assert "pydoc_data.topics" in out and "PSF License" in out
    assert "epoch 3/3" in err  # the tqdm progress bar
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    state = mg.load(npz)
    assert {"embed.weight", "lstm.weight_ih_l0", "lstm.weight_hh_l0", "lstm.bias_ih_l0",
            "lstm.bias_hh_l0", "head.weight", "head.bias"} == set(state)
    assert state["lstm.weight_ih_l0"].shape == (4 * 48, 16)
    assert result["calls"]["replayed"] >= 50, result["calls"]  # of 60 steps
    assert "compiled step:" in out and "(compiled steps)" in out
    eager = char_rnn.main(["--smoke", "--no-compile"])
    assert eager["calls"] is None and "(eager steps)" in capsys.readouterr().out
    assert eager["losses"] == result["losses"]


def test_text_is_read_from_the_standard_library():
    text = load().load_text(5_000)
    assert len(text) == 5_000 and text.count(" ") > 500


def test_help():
    result = subprocess.run([sys.executable, str(SCRIPT), "--help"], capture_output=True,
                            text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert "--chunk" in result.stdout and "truncated" in result.stdout
    assert "--smoke" in result.stdout and "--no-compile" in result.stdout
