"""Compile a generated program with the system's C compiler, and call it from Python.

On the device the C file is built by the device's toolchain. On a PC, the same file can be
built into a shared library and called through :mod:`ctypes`: that is how the tests check it
against the engine, and how a program can be tried before it is flashed.

>>> program = compile_training_step(model, batch_size=32, lr=0.1)   # doctest: +SKIP
>>> net = load(program, "build")                                     # doctest: +SKIP
>>> net.init(); loss = net.train_step(X[:32], y[:32])                # doctest: +SKIP
>>> net.state_dict()["0.weight"]                                     # doctest: +SKIP
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np

from .program import CProgram, check_linkable

__all__ = ["STRICT_FLAGS", "CompileError", "find_c_compiler", "build_command",
           "compile_executable", "load", "NativeProgram"]

STRICT_FLAGS = ("-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic")
"""The flags every generated file compiles under: plain ISO C99, every warning an error."""


class CompileError(RuntimeError):
    """The C compiler failed; the message holds its command and its output."""


def find_c_compiler() -> str | None:
    """The path of a C compiler: ``$CC`` if set, else ``cc``, ``gcc`` or ``clang``; or None."""
    for candidate in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if candidate:
            path = shutil.which(candidate)
            if path:
                return path
    return None


def build_command(program: CProgram, output: str | None = None, *, main: bool = True,
                  shared: bool = False, cc: str = "cc", optimize: str = "-O2") -> list[str]:
    """The compiler command that builds ``program`` (run it where its files were written).

    ``main=True`` builds the demo trainer (``-DMINIGRAD_MAIN``); ``shared=True`` a shared
    library instead.
    """
    output = output or (f"lib{program.name}.so" if shared else program.name)
    flags = [*STRICT_FLAGS, optimize]
    if main:
        flags.append("-DMINIGRAD_MAIN")
    if shared:
        flags += ["-shared", "-fPIC"]
    return [cc, *flags, f"{program.name}.c", "-o", output, "-lm"]


def _compile(program: CProgram, directory: str | Path, output: str, main: bool,
             shared: bool, cc: str | None) -> Path:
    check_linkable(program.buffer_size.elements, program.n_params,
                   np.dtype(program.dtype).itemsize, program.batch_size)
    cc = cc or find_c_compiler()
    if cc is None:
        raise CompileError("no C compiler found: install gcc or clang, or set $CC")
    directory = Path(directory)
    program.write(directory)
    command = build_command(program, output, main=main, shared=shared, cc=cc)
    result = subprocess.run(command, cwd=directory, capture_output=True, text=True)
    if result.returncode != 0:
        raise CompileError(f"{' '.join(command)} (in {directory}) failed with exit code "
                           f"{result.returncode}:\n{result.stderr}{result.stdout}")
    return directory / output


def compile_executable(program: CProgram, directory: str | Path, cc: str | None = None) -> Path:
    """Write ``program`` into ``directory`` and build its demo trainer (``main()``) there.

    Returns the path of the executable. Raises :class:`CompileError` if the build fails.
    """
    return _compile(program, directory, program.name, main=True, shared=False, cc=cc)


def load(program: CProgram, directory: str | Path, cc: str | None = None) -> "NativeProgram":
    """Build ``program`` as a shared library in ``directory`` and load it with ctypes.

    The library's file name includes a hash of the source, so programs of the same name
    never replace one another while loaded. Call ``.init()`` before training.
    """
    digest = hashlib.sha256(program.source.encode()).hexdigest()[:12]
    path = _compile(program, directory, f"lib{program.name}-{digest}.so", main=False,
                    shared=True, cc=cc)
    return NativeProgram(program, path)


class NativeProgram:
    """A compiled program, called from Python: the same functions, on NumPy arrays.

    Attributes
    ----------
    program : CProgram
        What was compiled.
    buffer : numpy.ndarray
        The C program's static buffer itself (not a copy): writing to it changes the network.
    """

    def __init__(self, program: CProgram, path: str | Path) -> None:
        self.program = program
        self.path = Path(path)
        self._dtype = np.dtype(program.dtype)
        real = ctypes.c_double if program.dtype == "float64" else ctypes.c_float
        p_real = ctypes.POINTER(real)
        lib = ctypes.CDLL(str(self.path))
        name = program.name
        self._init = getattr(lib, f"{name}_init")
        self._init.argtypes, self._init.restype = [], None
        self._forward = getattr(lib, f"{name}_forward")
        self._forward.argtypes = [p_real, p_real, ctypes.c_int]
        self._forward.restype = ctypes.c_int
        self._train_step = getattr(lib, f"{name}_train_step")
        target = ctypes.POINTER(ctypes.c_int) if program.loss == "cross_entropy" else p_real
        self._train_step.argtypes = [p_real, target, ctypes.c_int]
        self._train_step.restype = real
        self._get_params = getattr(lib, f"{name}_get_params")
        self._get_params.argtypes, self._get_params.restype = [p_real], None
        self._set_params = getattr(lib, f"{name}_set_params")
        self._set_params.argtypes, self._set_params.restype = [p_real], None
        get_buffer = getattr(lib, f"{name}_buffer")
        get_buffer.argtypes, get_buffer.restype = [], p_real
        self._lib = lib
        self.buffer = np.ctypeslib.as_array(get_buffer(), shape=(program.buffer_size.elements,))

    def init(self) -> None:
        """``<name>_init()``: the initial parameters, everything else zero."""
        self._init()

    def _rows(self, rows: Any) -> np.ndarray:
        """``rows`` as a C-ordered (n, n_in) array of the program's dtype."""
        x: np.ndarray = np.ascontiguousarray(rows, dtype=self._dtype)
        shape, n_in = self.program.input_shape, self.program.n_in
        if x.ndim == 1 + len(shape) and x.shape[1:] == shape:
            x = x.reshape(len(x), n_in)
        if x.ndim != 2 or x.shape[1] != n_in:
            raise ValueError(f"{self.program.name}: expected inputs of shape (n, {n_in})"
                             + (f" or (n, {', '.join(map(str, shape))})" if len(shape) > 1
                                else "") + f"; got {x.shape}")
        return x

    def forward(self, x: Any) -> np.ndarray:
        """The outputs (n, n_out) for the rows of ``x`` (any n: run in batches)."""
        x = self._rows(x)
        out = np.empty((len(x), self.program.n_out), dtype=self._dtype)
        b = self.program.batch_size
        for start in range(0, len(x), b):
            xs, outs = x[start:start + b], out[start:start + b]
            code = self._forward(xs.ctypes.data_as(self._forward.argtypes[0]),
                                 outs.ctypes.data_as(self._forward.argtypes[1]), len(xs))
            if code != 0:
                raise RuntimeError(f"{self.program.name}_forward returned {code}")
        return out

    def train_step(self, x: Any, targets: Any) -> float:
        """One training step on a batch (1 to batch_size rows); returns its loss.

        ``targets`` are ``n`` integer class labels in ``0..n_out-1`` (cross-entropy) or an
        ``(n, n_out)`` array (MSE). Labels are checked here, before the C runs: the C would
        only return NaN for one out of range, and a float label would be truncated to an int
        without a word. (PyTorch's ``cross_entropy`` refuses both too: "expected target dtype
        to be Long or Byte, but got Float", "Target 5 is out of bounds".)
        """
        x = self._rows(x)
        n = len(x)
        if not 1 <= n <= self.program.batch_size:
            raise ValueError(f"{self.program.name}: a batch has 1 to "
                             f"{self.program.batch_size} rows; got {n}")
        if self.program.loss == "cross_entropy":
            t = self._labels(targets, n)
        else:
            t = np.ascontiguousarray(targets, dtype=self._dtype)
            if t.shape != (n, self.program.n_out):
                raise ValueError(f"{self.program.name}: expected targets of shape "
                                 f"{(n, self.program.n_out)}; got {t.shape}")
        return float(self._train_step(x.ctypes.data_as(self._train_step.argtypes[0]),
                                      t.ctypes.data_as(self._train_step.argtypes[1]), n))

    def _labels(self, targets: Any, n: int) -> np.ndarray:
        """``targets`` as ``n`` C ints, each a class index in ``0..n_out-1``."""
        labels = np.asarray(targets)
        name, classes = self.program.name, self.program.n_out
        if labels.shape != (n,):
            raise ValueError(f"{name}: expected {n} labels, shape ({n},); got shape "
                             f"{labels.shape}")
        if not np.issubdtype(labels.dtype, np.integer):
            whole = (np.issubdtype(labels.dtype, np.floating)
                     and bool(np.all(np.isfinite(labels) & (labels == np.round(labels)))))
            raise ValueError(f"{name}: labels must be integers (class indices 0.."
                             f"{classes - 1}); got dtype {labels.dtype}"
                             + (" (they are whole numbers: pass labels.astype(int))" if whole
                                else ""))
        bad = np.flatnonzero((labels < 0) | (labels >= classes))
        if bad.size:
            row = int(bad[0])
            raise ValueError(f"{name}: label {labels[row]} (row {row}) is out of range: labels "
                             f"are class indices 0..{classes - 1} ({bad.size} of {n} out of "
                             "range)")
        return np.ascontiguousarray(labels, dtype=np.intc)

    def get_params(self) -> np.ndarray:
        """``<name>_get_params``: all parameters, one flat array in the model's order."""
        out = np.empty(self.program.n_params, dtype=self._dtype)
        self._get_params(out.ctypes.data_as(self._get_params.argtypes[0]))
        return out

    def set_params(self, values: Any) -> None:
        """``<name>_set_params``: set all parameters from one flat array (model's order)."""
        values = np.ascontiguousarray(values, dtype=self._dtype).ravel()
        if values.size != self.program.n_params:
            raise ValueError(f"{self.program.name}: expected {self.program.n_params} "
                             f"parameter values; got {values.size}")
        self._set_params(values.ctypes.data_as(self._set_params.argtypes[0]))

    def region(self, name: str) -> np.ndarray:
        """A view of the array ``name`` of the layout (e.g. ``"grad/0.weight"``), shaped."""
        r = self.program.layout[name]
        return self.buffer[r.offset:r.end].reshape(r.shape)

    def state_dict(self) -> dict[str, np.ndarray]:
        """The current parameters by name (copies), as the model's ``state_dict()`` keys."""
        return {name: self.region(name).copy() for name in self.program.param_names}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Copy parameter values (arrays or tensors, by name) into the buffer.

        All or nothing, as ``Module.load_state_dict``: every name and shape is checked and
        every value converted before the first is written.
        """
        missing = [name for name in self.program.param_names if name not in state_dict]
        if missing:
            raise KeyError(f"{self.program.name}: the state dict lacks {missing}")
        values = {}
        for name in self.program.param_names:
            value = np.asarray(getattr(state_dict[name], "data", state_dict[name]),
                               dtype=self._dtype)
            if value.shape != self.program.layout[name].shape:
                raise ValueError(f"{self.program.name}: {name!r} has shape {value.shape}; "
                                 f"expected {self.program.layout[name].shape}")
            values[name] = value
        for name, value in values.items():
            self.region(name)[...] = value

    def grads(self) -> dict[str, np.ndarray]:
        """The gradients of the last training step, by parameter name (copies)."""
        return {name: self.region(f"grad/{name}").copy() for name in self.program.param_names}
