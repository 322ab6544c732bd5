"""Importing a script of ``examples/`` (not a package) to call its functions in a test."""
from __future__ import annotations

import importlib.util
from types import ModuleType

from tests.support import ROOT

EXAMPLES = ROOT / "examples"


def load_example(name: str, module_name: str | None = None) -> ModuleType:
    """A fresh import of ``examples/<name>.py``, as the module ``module_name`` (default ``name``)."""
    spec = importlib.util.spec_from_file_location(module_name or name, EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None, f"no examples/{name}.py"
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
