"""A toy checks package for the grader's tests (it stands in for ``minigrad.course.checks``)."""
from . import lesson9  # noqa: F401  (``checks.lesson9`` works after ``import gradingtoy``)


class CheckFailed(AssertionError):
    """A check found a wrong answer."""


def refuse_minigrad(obj, what):
    """Refuse objects defined in minigrad: the check wants the student's own."""
    if getattr(obj, "__module__", "").startswith("minigrad"):
        raise CheckFailed(f"{what}: this is minigrad's own {obj.__name__}; pass yours")
