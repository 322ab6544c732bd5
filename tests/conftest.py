"""Shared test set-up: hypothesis profiles, the markers each folder gets, and the header.

Helpers the tests share live in the package ``tests.support``, not here.
"""
import os
from pathlib import Path

# A failing check raises CheckFailed here (in a notebook it prints a line and records it). Set
# before anything runs, so that nbval's kernels inherit it too.
os.environ.setdefault("MINIGRAD_CHECKS_RAISE", "1")

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=25, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=60, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))

TESTS = Path(__file__).resolve().parent
# The folder a test lives in gives it a marker, so that `-m engine` or `-m "not grading"` picks
# a part of the suite without naming paths (the markers are declared in pyproject.toml).
FOLDER_MARKERS = {"engine": "engine", "nn": "nn", "export": "export", "examples": "examples",
                  "bench": "examples", "course": "course", "browser": "browser"}


def pytest_collection_modifyitems(items):
    for item in items:
        try:
            parts = Path(str(item.fspath)).resolve().relative_to(TESTS).parts
        except ValueError:        # a notebook of solutions/, run by nbval
            item.add_marker(pytest.mark.notebooks)
            continue
        if len(parts) > 1 and parts[0] in FOLDER_MARKERS:
            item.add_marker(getattr(pytest.mark, FOLDER_MARKERS[parts[0]]))
        if parts[:2] == ("course", "grading"):
            item.add_marker(pytest.mark.grading)
        # array-api-strict checks every call it is given: a test run on it takes several times
        # its NumPy run, so `-m "not slow"` runs the namespace tables on NumPy alone
        callspec = getattr(item, "callspec", None)
        if callspec is not None and callspec.params.get("ns") == "strict":
            item.add_marker(pytest.mark.slow)


def pytest_report_header(config):
    """Say which array namespaces the namespace-parametrised engine tests run on."""
    from tests.support.engine_helpers import NAMESPACES
    return f"minigrad test namespaces: {', '.join(NAMESPACES)} (MINIGRAD_TEST_NAMESPACES)"
