"""examples/train_moons.py runs as the README shows, learns the moons, and writes its figure."""
import pathlib
import re
import subprocess
import sys

import numpy as np

import minigrad as mg
from minigrad import nn
from minigrad.data import moons

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "examples" / "train_moons.py"


def test_train_moons_default_run(tmp_path):
    png, npz = tmp_path / "moons.png", tmp_path / "moons.npz"
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--plot", str(png), "--save", str(npz)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    accuracy = float(re.search(r"^accuracy (\S+)$", result.stdout, re.M).group(1))
    loss = float(re.search(r"^final loss (\S+)$", result.stdout, re.M).group(1))
    assert accuracy >= 0.97, result.stdout
    assert 0 <= loss < 0.1
    assert "training" in result.stderr  # the tqdm progress bar
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000

    # the saved model loads into the same architecture and predicts as well
    model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(),
                          nn.Linear(16, 2))
    model.load_state_dict(mg.load(npz))
    X, y = moons(1000, noise=0.1, seed=0)
    with mg.no_grad():
        predicted = model(mg.tensor(X)).numpy().argmax(axis=1)
    assert np.mean(predicted == y) == accuracy


def test_train_moons_options():
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--epochs", "3", "--hidden", "8", "--dtype", "float32",
         "--n", "200", "--lr", "0.1", "--seed", "1"],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "Linear(in_features=2, out_features=8, bias=True)" in result.stdout
    assert "trained 3 epochs" in result.stdout
    assert re.search(r"^accuracy 0\.\d+$", result.stdout, re.M)
