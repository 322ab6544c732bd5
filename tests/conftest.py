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


def fails(check, *args, match: str) -> str:
    """Run ``check(*args)``, assert it raises ``CheckFailed`` and its message matches ``match``.

    ``match`` is a regular expression searched across lines, ignoring case. Returns the message.
    The tables of mistakes in ``test_checks_lesson*.py`` use it, one row a mistake.
    """
    import re

    import pytest

    from minigrad.course.checks import CheckFailed

    with pytest.raises(CheckFailed) as info:
        check(*args)
    message = str(info.value)
    assert re.search(match, message, flags=re.DOTALL | re.IGNORECASE), \
        f"the message does not match {match!r}:\n{message}"
    return message


def pytest_report_header(config):
    """Say which array namespaces the namespace-parametrised engine tests run on."""
    from engine_helpers import NAMESPACES
    return f"minigrad test namespaces: {', '.join(NAMESPACES)} (MINIGRAD_TEST_NAMESPACES)"
