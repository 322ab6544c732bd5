"""The one walk through a model that both exporters share: its layers, in the order they run.

An exporter translates layers it knows (``Linear``, ``ReLU``, ...) one by one. A model is
such a layer, or an ``nn.Sequential`` of them, nested or not: a Sequential's ``forward`` is
"apply the layers in order", so its layers can be exported in order. Any other module is
refused: a ``forward`` of its own can compute anything, and only the known layers' own
``forward`` is translated (a subclass of ``Linear`` that overrides ``forward`` is not a
``Linear`` for an exporter).
"""
from __future__ import annotations

from typing import Any, Callable

from minigrad import nn

__all__ = ["layers"]

Refusal = Callable[[str, nn.Module, "type[Any] | None"], Exception]


def layers(model: nn.Module, supported: tuple[type[Any], ...],
           refuse: Refusal) -> list[tuple[str, nn.Module, type[Any]]]:
    """The layers ``model`` applies, in order: ``(path, module, the supported class it is)``.

    Parameters
    ----------
    model : nn.Module
        A supported layer, or a ``Sequential`` (nested or not) of them.
    supported : tuple of type
        The layer classes the exporter translates.
    refuse : callable
        ``refuse(path, module, base)`` makes the exception raised for a module that cannot
        be translated; ``base`` is the supported class it subclasses while overriding
        ``forward``, or None. Paths are those of ``model.named_modules()`` (``"1.0"``; ``""``
        for the model itself).

    Returns
    -------
    list of (str, nn.Module, type)
        Sequentials opened: only the layers themselves.
    """
    found: list[tuple[str, nn.Module, type[Any]]] = []

    def visit(path: str, module: nn.Module) -> None:
        if isinstance(module, nn.Sequential) and type(module).forward is nn.Sequential.forward:
            for i, layer in enumerate(module):
                visit(f"{path}.{i}" if path else str(i), layer)
            return
        base: type[Any] | None = next((c for c in type(module).__mro__ if c in supported), None)
        if base is None or type(module).forward is not base.forward:
            raise refuse(path, module, base)
        found.append((path, module, base))

    visit("", model)
    return found
