"""``ModuleList`` and ``ModuleDict``: modules held in a list or a dict, as in PyTorch.

A plain Python list or dict of modules held by a :class:`~minigrad.nn.Module` already works in
minigrad (the course teaches that :meth:`Module.named_parameters` walks attributes, lists and
dicts; PyTorch does not, which is why it needs these classes). They exist so that PyTorch code
runs unchanged, and their parameters are named the PyTorch way: ``"layers.0.weight"``.
"""
from __future__ import annotations

from typing import Any, Iterable, Iterator, Mapping

from .modules import Module

__all__ = ["ModuleList", "ModuleDict"]


def _check_module(value: Any, where: str) -> Module:
    if not isinstance(value, Module):
        raise TypeError(f"{where}: expected a Module; got {type(value).__name__} (did you pass "
                        "a class instead of an instance, e.g. nn.ReLU instead of nn.ReLU()?)")
    return value


class ModuleList(Module):
    """A list of modules: indexable, iterable, sized; children named ``"0"``, ``"1"``, ...

    It has no ``forward``: use its modules in your own (``for layer in self.layers: ...``).
    """

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        self._list: list[Module] = []
        if modules is not None:
            self.extend(modules)

    def _members(self) -> list[tuple[str, Any]]:
        return [(str(i), m) for i, m in enumerate(self._list)]

    def append(self, module: Module) -> "ModuleList":
        """Add a module at the end."""
        self._list.append(_check_module(module, "ModuleList.append"))
        return self

    def extend(self, modules: Iterable[Module]) -> "ModuleList":
        """Add every module of ``modules`` at the end."""
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> None:
        """Insert a module before position ``index``."""
        self._list.insert(index, _check_module(module, "ModuleList.insert"))

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return ModuleList(self._list[index])
        return self._list[index]

    def __setitem__(self, index: int, module: Module) -> None:
        self._list[index] = _check_module(module, "ModuleList[...] =")

    def __delitem__(self, index: int | slice) -> None:
        del self._list[index]

    def __len__(self) -> int:
        return len(self._list)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._list)

    def __iadd__(self, modules: Iterable[Module]) -> "ModuleList":
        return self.extend(modules)


class ModuleDict(Module):
    """A dict of modules, in insertion order; each child named by its key.

    Keys must be strings without dots (a dot separates the parts of a parameter's name).
    """

    def __init__(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]] | None = None
                 ) -> None:
        super().__init__()
        self._dict: dict[str, Module] = {}
        if modules is not None:
            self.update(modules)

    def _members(self) -> list[tuple[str, Any]]:
        return list(self._dict.items())

    def __setitem__(self, key: str, module: Module) -> None:
        if not isinstance(key, str) or not key or "." in key:
            raise KeyError(f"ModuleDict: keys must be non-empty strings without '.'; got {key!r}")
        self._dict[key] = _check_module(module, f"ModuleDict[{key!r}] =")

    def __getitem__(self, key: str) -> Module:
        try:
            return self._dict[key]
        except KeyError:
            raise KeyError(f"ModuleDict has no module {key!r}; it has {list(self._dict)}") \
                from None

    def __delitem__(self, key: str) -> None:
        del self._dict[key]

    def __contains__(self, key: object) -> bool:
        return key in self._dict

    def __len__(self) -> int:
        return len(self._dict)

    def __iter__(self) -> Iterator[str]:
        return iter(self._dict)

    def keys(self) -> Iterable[str]:
        return self._dict.keys()

    def values(self) -> Iterable[Module]:
        return self._dict.values()

    def items(self) -> Iterable[tuple[str, Module]]:
        return self._dict.items()

    def update(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]]) -> None:
        """Add or replace modules from a dict or from (key, module) pairs."""
        pairs = modules.items() if isinstance(modules, Mapping) else modules
        for key, module in pairs:
            self[key] = module

    def pop(self, key: str) -> Module:
        """Remove the module under ``key`` and return it."""
        module = self[key]
        del self._dict[key]
        return module
