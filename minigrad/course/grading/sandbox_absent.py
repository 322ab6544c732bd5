"""What a grader-only module is inside the grader's sandbox: nothing.

The sandbox mounts this file over each module that computes expected values (the checks'
judges): a notebook can neither read them nor use anything of them; every name asked of the
module raises :class:`ImportError`.
"""
from typing import Any


def __getattr__(name: str) -> Any:
    if name.startswith("__"):   # (what tools ask a module: __test__, __path__, ...)
        raise AttributeError(name)
    raise ImportError(f"{name} is not in the grader's sandbox: the judges compute the expected "
                      "values, which never enter the student's process")
