"""minigrad against PyTorch's pinned answers (tests/support/torch_cases.py, tests/support/torch_values.json).

Every case runs on NumPy and on array-api-strict and must give PyTorch's values, dtypes and
gradients, or raise where PyTorch raises, with a message that names the problem.
``python -m bench.torch_parity`` re-derives the pinned values from PyTorch itself.
"""
from __future__ import annotations

import warnings

import pytest

from tests.support.torch_cases import CASES, compare, load_pinned, run_case

_, PINNED = load_pinned()

NAMES = [case.name for case in CASES]


def test_every_case_is_pinned():
    assert sorted(PINNED) == sorted(NAMES), "run: python -m bench.torch_parity --write"


@pytest.mark.parametrize("lib", ["minigrad", "minigrad-strict"])
@pytest.mark.parametrize("case", CASES, ids=NAMES)
def test_case_gives_pytorchs_answer(case, lib):
    want = PINNED[case.name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # log(0), 0 * inf: as PyTorch, no noise
        got = run_case(case, lib)
    problems = compare(case, got, want)
    assert not problems, f"{case.name} on {lib}: " + "; ".join(problems)
    if want.get("raises"):
        message = got["message"]
        assert message.split(":")[0] in {"ValueError", "IndexError", "TypeError", "AxisError"}
        assert case.match in message, f"{case.name}: the error should say {case.match!r}; " \
                                      f"got {message}"
