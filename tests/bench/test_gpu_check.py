"""The GPU check's own logic (bench/gpu_check.py), which must work the first time it meets a GPU.

Only what runs without PyTorch or a GPU is tested here: which tests it selects, the tolerance
on the losses, and the script's refusal of unknown options. ``bash bench/gpu_check.sh --cpu``
rehearses the rest on any machine with PyTorch.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # bench/ is not installed: it lives beside minigrad/
    sys.path.insert(0, str(ROOT))

from bench import gpu_check  # noqa: E402


def test_namespace_test_ids_keep_the_tests_of_one_namespace():
    collected = "\n".join([
        "tests/engine/test_tensor_ops.py::test_unary_vjp[exp-cupy]",
        "tests/engine/test_tensor_ops.py::test_unary_vjp[exp-numpy]",
        "tests/nn/test_conv.py::test_add_windows[shape0-kernel0-stride0-cupy]",
        "tests/engine/test_tensor_engine.py::test_graph_is_freed_by_reference_counting_alone",
        "tests/engine/test_tensor_ops.py::test_pick[cupyish-strict]",
        "tests/nn/test_conv.py::test_conv_and_pool_on_the_gpu_match_numpy[1-0]",
        "",
        "4 tests collected in 0.5s",
    ])
    assert gpu_check.namespace_test_ids(collected, "cupy") == [
        "tests/engine/test_tensor_ops.py::test_unary_vjp[exp-cupy]",
        "tests/nn/test_conv.py::test_add_windows[shape0-kernel0-stride0-cupy]",
        "tests/nn/test_conv.py::test_conv_and_pool_on_the_gpu_match_numpy[1-0]",
    ]
    assert gpu_check.namespace_test_ids(collected, "numpy") == [
        "tests/engine/test_tensor_ops.py::test_unary_vjp[exp-numpy]"]


def test_the_namespace_test_files_are_those_using_engine_helpers():
    files = gpu_check._namespace_test_files()
    assert "tests/engine/test_tensor_ops.py" in files and "tests/nn/test_conv.py" in files
    assert "tests/engine/test_gpu.py" not in files  # run whole, separately
    for name in files:
        text = (ROOT / name).read_text()
        assert "from tests.support.engine_helpers import" in text or "cupy_available" in text


@pytest.mark.parametrize("a, b, agree", [
    ([2.30, 2.10], [2.30, 2.10], True),
    ([2.30, 2.1002], [2.30, 2.1000], True),       # 1e-4 relative at 2.1: within
    ([2.30, 2.1003], [2.30, 2.1000], False),      # 1.4e-4 relative: outside
    ([0.01001], [0.01000], True),                 # small losses: 1e-4 absolute
    ([0.0103], [0.0100], False),
    ([2.3], [2.3, 2.1], False),                   # a missing loss never agrees
])
def test_losses_agree_within_the_stated_tolerance(a, b, agree):
    assert gpu_check.LOSS_RTOL == 1e-4
    assert gpu_check.losses_agree(a, b)[0] is agree


def test_the_script_refuses_unknown_options():
    done = subprocess.run(["bash", str(ROOT / "bench" / "gpu_check.sh"), "--gpu"],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert "usage: bash bench/gpu_check.sh [--cpu | --fetch-wheels]" in done.stderr
