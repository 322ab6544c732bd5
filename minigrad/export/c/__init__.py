"""Compile a network's training step to plain C, with one static buffer, for on-device training.

A microcontroller has no Python and often no heap; it has a C compiler and a few kilobytes of
RAM. :func:`compile_training_step` turns a minigrad model into one C99 file that trains it
there: the forward pass, the loss, the backward pass and the SGD update, written out as loops,
with every number the network needs in ONE static array whose layout is fixed when the code
is generated. The backward loops are the engine's own VJP formulas, so the C program and
minigrad, started from the same weights and fed the same batches, take the same steps.

>>> from minigrad import nn
>>> from minigrad.export.c import compile_training_step
>>> model = nn.Sequential(nn.Linear(2, 16, seed=0), nn.ReLU(), nn.Linear(16, 2, seed=1))
>>> program = compile_training_step(model, loss="cross_entropy", batch_size=32, lr=0.1)
>>> program.buffer_size.bytes
14112
>>> c_path, h_path = program.write("build")          # doctest: +SKIP

Supported: ``Sequential`` (nested or not) of ``Linear``, ``Conv2d``, ``MaxPool2d``,
``Flatten``, ``ReLU``, ``LeakyReLU``, ``Sigmoid`` and ``Tanh``; softmax cross-entropy or MSE;
SGD with momentum and weight decay; float64 (``double``) or float32 (``float``).

Then ``cc -std=c99 -O2 -c build/net.c`` and call ``net_init()`` and ``net_train_step(x, y,
n)`` from the device's code, or build the demo trainer with ``-DMINIGRAD_MAIN``. To check a
program from Python, :func:`load` compiles it into a shared library and wraps it with ctypes.

Modules: :mod:`~minigrad.export.c.program` (the API and the file's assembly),
:mod:`~minigrad.export.c.layout` (the buffer's memory map), :mod:`~minigrad.export.c.layers`
and :mod:`~minigrad.export.c.losses` (the C of each layer and loss),
:mod:`~minigrad.export.c.harness` (the optional ``main()``), :mod:`~minigrad.export.c.native`
(compiling and loading from Python), :mod:`~minigrad.export.c.cfloat` (``double`` or
``float``).

The C does what the engine does, NaN and inf included, or the generator refuses: an
unknown layer, sizes that do not fit, a program too large to link; and
:class:`NativeProgram` refuses labels that are not class indices.

Imports: the engine (``minigrad.nn``, ``minigrad.backend``), NumPy, the standard library
(``ctypes``, ``subprocess`` to run the system's C compiler) and :mod:`minigrad.export._walk`.
Never ``minigrad.course``; and the engine never imports this package.
"""
from .layout import Region
from .native import (
    STRICT_FLAGS,
    CompileError,
    NativeProgram,
    build_command,
    compile_executable,
    find_c_compiler,
    load,
)
from .program import (
    MAX_STATIC_BYTES,
    BufferSize,
    CProgram,
    UnsupportedModuleError,
    compile_training_step,
)

__all__ = [
    "compile_training_step", "CProgram", "BufferSize", "Region", "UnsupportedModuleError",
    "load", "NativeProgram", "compile_executable", "build_command", "find_c_compiler",
    "CompileError", "STRICT_FLAGS", "MAX_STATIC_BYTES",
]
