"""The simulator examples, in smoke mode: each differentiates through its simulation, agrees
with finite differences, and recovers the known answer it states."""
from __future__ import annotations

import pytest

from tests.support.examples import load_example

PNG = b"\x89PNG\r\n\x1a\n"


def load(name: str):
    return load_example(name)


def test_projectile_is_aimed_at_the_target(tmp_path, capsys):
    example = load("sim_projectile")
    png = tmp_path / "projectile.png"
    result = example.main(["--smoke", "--plot", str(png)])
    assert result["gradient_error"] < 1e-6  # autodiff == finite differences
    assert result["angle"] == pytest.approx(example.TRUE_ANGLE, abs=0.2)  # 35 degrees
    assert result["speed"] == pytest.approx(example.TRUE_SPEED, abs=0.2)  # 30 m/s
    assert result["miss"] < 0.2  # metres
    assert png.read_bytes()[:8] == PNG
    out = capsys.readouterr().out
    assert "recovered angle 3" in out and "gradient check" in out


def test_spring_parameters_are_recovered_from_noisy_observations(tmp_path):
    example = load("sim_spring")
    png = tmp_path / "spring.png"
    result = example.main(["--smoke", "--plot", str(png)])
    assert result["gradient_error"] < 1e-6
    assert result["k"] == pytest.approx(example.TRUE_K, abs=0.05)  # 4
    assert result["c"] == pytest.approx(example.TRUE_C, abs=0.05)  # 0.5
    assert png.read_bytes()[:8] == PNG


def test_heat_source_is_found_from_a_later_snapshot(tmp_path):
    example = load("sim_heat")
    png = tmp_path / "heat.png"
    result = example.main(["--smoke", "--plot", str(png)])
    assert result["gradient_error"] < 1e-6
    assert result["column"] == pytest.approx(21.0, abs=0.3)
    assert result["row"] == pytest.approx(9.0, abs=0.3)
    assert result["height"] == pytest.approx(10.0, abs=0.3)
    assert png.read_bytes()[:8] == PNG


def test_heat_step_runs_on_array_api_strict():
    """Array operations only: the simulation runs, and differentiates, on any namespace."""
    import array_api_strict as xps
    import numpy as np

    import minigrad as mg
    example = load("sim_heat")
    plate = example.Plate()
    for name in ("second_difference", "column", "row"):
        t = getattr(plate, name)
        setattr(plate, name, mg.Tensor(xps.asarray(t.numpy())))
    spot = mg.Tensor(xps.asarray(np.array(example.START_SPOT)), requires_grad=True)
    u = plate.diffuse(plate.hot_spot(spot), steps=3)
    (u * u).sum().backward()
    assert type(spot.grad) is type(xps.asarray(0.0)) and spot.grad.shape == (3,)
