"""The C floating-point type of a generated program: its name, its literals, its math functions.

The generated C computes in one type throughout, ``double`` or ``float``, the same type the
engine's arrays have (float64 or float32). Every constant is written in that type too
(``0.5`` or ``0.5f``), and every math function is its version for that type (``exp`` or
``expf``), so that a float32 program never silently computes in double: it then rounds as the
engine's float32 arrays do.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["CFloat", "c_float"]


@dataclass(frozen=True)
class CFloat:
    """One of C's floating types, as the generated code writes it.

    Attributes
    ----------
    dtype : str
        The NumPy name: ``"float64"`` or ``"float32"``.
    name : str
        The C name: ``"double"`` or ``"float"``.
    suffix : str
        What ends a literal (``""`` or ``"f"``) and a math function's name (``expf``).
    scanf : str
        The ``scanf`` conversion that reads one value (``"%lf"`` or ``"%f"``).
    """

    dtype: str
    name: str
    suffix: str
    scanf: str

    @property
    def itemsize(self) -> int:
        """Bytes per value (8 or 4)."""
        return np.dtype(self.dtype).itemsize

    def literal(self, value: float) -> str:
        """``value`` as a C constant of this type that reads back as exactly the same number.

        NumPy's shortest round-trip form is used (``0.1``, not ``0.1000000000000000055``),
        rounded to the type first: ``literal(0.1)`` is ``"0.1f"`` for float.
        """
        v = np.dtype(self.dtype).type(value)
        if not math.isfinite(float(v)):
            raise ValueError(f"codegen: cannot write {value!r} as a C {self.name} literal "
                             "(it is not finite); is the model's state already broken?")
        positional = np.format_float_positional(v, unique=True, trim="0")
        scientific = np.format_float_scientific(v, unique=True, trim="0")
        shorter = scientific if len(scientific) < len(positional) else positional
        return shorter + self.suffix

    def fn(self, name: str) -> str:
        """The math function ``name`` (``"exp"``, ``"log"``, ``"tanh"``) for this type."""
        return name + self.suffix


_TYPES = {
    "float64": CFloat("float64", "double", "", "%lf"),
    "float32": CFloat("float32", "float", "f", "%f"),
}


def c_float(dtype: str) -> CFloat:
    """The :class:`CFloat` for ``"float64"`` or ``"float32"``.

    Raises
    ------
    ValueError
        For any other dtype.
    """
    try:
        key = np.dtype(dtype).name
    except TypeError:
        key = None
    if key not in _TYPES:
        raise ValueError(f"codegen: dtype must be 'float64' or 'float32'; got {dtype!r}")
    return _TYPES[key]
