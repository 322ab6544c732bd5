"""Helpers the test files share: import them as ``from tests.support.<module> import ...``.

* ``engine_helpers``: the array namespaces the engine's tests run on, arrays made on them, and
  a training step written once;
* ``torch_cases``, ``torch_cases_issue29``, ``optim_cases``, ``attention_recipe``: the pinned
  PyTorch cases and their JSON answers (re-derived by the ``bench/torch_parity*.py`` scripts);
* ``solutions_helper``, ``split_helpers``, ``checking``: the reference solutions' namespaces,
  mistakes and forgeries for the checks' tables, and ``fails`` (a check fails with a message).
"""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
"""The repository's root folder."""
