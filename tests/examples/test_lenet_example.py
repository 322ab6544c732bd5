"""examples/lenet_digits.py runs end to end, and --save / --load give back the same model."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np

import minigrad as mg

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "lenet_digits.py"


def run_example(*args: str) -> str:
    result = subprocess.run([sys.executable, str(EXAMPLE), "--quiet", *args],
                            check=False, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_lenet_example_trains_saves_and_loads(tmp_path):
    path = tmp_path / "lenet.npz"
    out = run_example("--epochs", "1", "--limit", "256", "--save", str(path))
    assert "digits: 256 training and 256 test images of 1x32x32" in out
    assert "Conv2d(1, 6, kernel_size=(5, 5), stride=(1, 1))" in out
    losses = [float(v) for v in re.findall(r"train loss ([\d.]+)", out)]
    assert len(losses) == 1 and all(np.isfinite(losses))
    final = float(re.search(r"final test accuracy ([\d.]+)", out).group(1))
    assert 0.0 <= final <= 1.0
    assert path.exists()

    state = mg.load(path)
    assert state["0.weight"].shape == (6, 1, 5, 5) and state["0.weight"].dtype == np.float32
    assert state["3.weight"].shape == (16, 6, 5, 5)
    assert state["11.weight"].shape == (10, 84)

    # Loading the file and training 0 epochs evaluates exactly the saved model.
    out = run_example("--epochs", "0", "--limit", "256", "--load", str(path))
    loaded = float(re.search(r"loaded .*: test accuracy ([\d.]+)", out).group(1))
    assert loaded == final
    assert float(re.search(r"final test accuracy ([\d.]+)", out).group(1)) == final
