"""Shared test set-up: hypothesis profiles and the array namespaces the engine runs on."""
import os

# A failing check raises CheckFailed here (in a notebook it prints a line and records it). Set
# before anything runs, so that nbval's kernels inherit it too.
os.environ.setdefault("MINIGRAD_CHECKS_RAISE", "1")

from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=25, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=60, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


def pytest_report_header(config):
    """Say which array namespaces the namespace-parametrised engine tests run on."""
    from engine_helpers import NAMESPACES
    return f"minigrad test namespaces: {', '.join(NAMESPACES)} (MINIGRAD_TEST_NAMESPACES)"
