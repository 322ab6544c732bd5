"""The memory map of a generated program: every array at a fixed offset in one static buffer.

The generated C declares a single array, ``static double buf[N];``, and nothing else holds
numbers: parameters, their gradients, momentum, the activations of the forward pass and the
gradients flowing back all live in it, each in its own *region*. The offsets are decided here,
in Python, when the code is generated; the C only ever writes ``buf + 48``. So the memory a
device needs is known before the program runs, there is no heap, and nothing can run out of
memory at run time.

Regions are laid end to end, in the order they are added, without gaps or overlaps.
"""
from __future__ import annotations

import math
from typing import Iterator, NamedTuple

__all__ = ["Region", "BufferLayout"]


class Region(NamedTuple):
    """Where one array lives in the buffer: its first element's ``offset`` and its ``shape``.

    The array is stored row-major (C order) in the ``size`` elements from ``offset``.
    """

    offset: int
    shape: tuple[int, ...]

    @property
    def size(self) -> int:
        """Number of elements."""
        return math.prod(self.shape)

    @property
    def end(self) -> int:
        """One past the last element (the next region's offset)."""
        return self.offset + self.size


class BufferLayout:
    """Regions handed out one after another in a buffer that grows to fit them.

    >>> layout = BufferLayout()
    >>> layout.add("0.weight", (16, 2))
    Region(offset=0, shape=(16, 2))
    >>> layout.add("0.bias", (16,))
    Region(offset=32, shape=(16,))
    >>> layout.size
    48
    """

    def __init__(self) -> None:
        self.regions: dict[str, Region] = {}
        self.notes: dict[str, str] = {}
        self.size = 0

    def add(self, name: str, shape: tuple[int, ...], note: str = "") -> Region:
        """Reserve the next ``prod(shape)`` elements for the array ``name``.

        ``note`` says what the array is for (shown in the memory map).
        """
        if name in self.regions:
            raise ValueError(f"codegen: two arrays are both named {name!r} in the buffer")
        shape = tuple(int(d) for d in shape)
        if not shape or any(d < 1 for d in shape):
            raise ValueError(f"codegen: array {name!r} needs a non-empty shape of positive "
                             f"sizes; got {shape}")
        region = Region(self.size, shape)
        self.regions[name] = region
        self.notes[name] = note
        self.size = region.end
        return region

    def __getitem__(self, name: str) -> Region:
        return self.regions[name]

    def __contains__(self, name: object) -> bool:
        return name in self.regions

    def __iter__(self) -> Iterator[str]:
        return iter(self.regions)

    def table(self) -> list[str]:
        """The memory map as aligned text lines: offset, size, shape, name, note."""
        width = max((len(n) for n in self.regions), default=4)
        lines = [f"{'offset':>8} {'size':>7}  {'shape':<12} {'name':<{width}}  what"]
        for name, r in self.regions.items():
            shape = "(" + ", ".join(map(str, r.shape)) + ("," if len(r.shape) == 1 else "") + ")"
            lines.append(f"{r.offset:>8} {r.size:>7}  {shape:<12} {name:<{width}}  "
                         f"{self.notes[name]}".rstrip())
        return lines
