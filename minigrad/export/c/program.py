"""Compile a network's training step to one self-contained C99 file with one static buffer.

:func:`compile_training_step` walks a model (a ``Sequential``, nested or not, of ``Linear``,
``Conv2d``, ``MaxPool2d``, ``Flatten`` and activations), checks that the shapes fit, decides
where every array lives in one buffer (:mod:`minigrad.export.c.layout`), and writes the C of
each step in order:

1. the forward pass, layer by layer (:mod:`minigrad.export.c.layers`);
2. the loss and the gradient of the output, fused (:mod:`minigrad.export.c.losses`);
3. the backward pass, the layers in reverse, each its VJP as loops;
4. the SGD update of every parameter (with momentum and weight decay if asked).

The result, a :class:`CProgram`, holds the ``.c`` and ``.h`` text. The C needs only
``<math.h>`` and ``<string.h>`` (and ``<stdio.h>`` for the optional ``main()``); no heap, no
threads, no files: it runs on a microcontroller as well as on a PC.
"""
from __future__ import annotations

import keyword
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from ... import backend, nn
from ..._utils import pair
from .. import _walk
from .cfloat import CFloat, c_float
from .harness import harness
from .layers import (
    ELEMENTWISE,
    CConv2d,
    CElementwise,
    CFlatten,
    CLayer,
    CLinear,
    CMaxPool2d,
)
from .layout import BufferLayout, Region
from .losses import LOSSES, CLoss

__all__ = ["compile_training_step", "CProgram", "BufferSize", "UnsupportedModuleError",
           "MAX_STATIC_BYTES", "check_linkable"]

SUPPORTED = ("Linear, Conv2d, MaxPool2d, Flatten, ReLU, LeakyReLU, Sigmoid and Tanh, in a "
             "Sequential (nested or not)")
_LAYER_TYPES = (nn.Linear, nn.Conv2d, nn.MaxPool2d, nn.Flatten, nn.ReLU, nn.LeakyReLU,
                nn.Sigmoid, nn.Tanh, nn.Sequential)

_C_KEYWORDS = set("""auto break case char const continue default do double else enum extern
float for goto if inline int long register restrict return short signed sizeof static struct
switch typedef union unsigned void volatile while main""".split())


class UnsupportedModuleError(TypeError):
    """The model holds a module the C generator cannot write (its message names it and where)."""


MAX_STATIC_BYTES = 2 ** 31 - 1
"""The most bytes of static data (the buffer, the initial parameters, compiled-in training
data) a generated program may hold. The usual ("small") code model of x86-64 and AArch64
compilers places all code and static data within 2 GiB: beyond that the linker fails with
"relocation truncated to fit". The loops also index the buffer with C ``int``."""


def check_linkable(buffer_elements: int, n_params: int, itemsize: int, batch_size: int,
                   data_bytes: int = 0) -> None:
    """Raise ValueError if a program of these sizes would not link (see MAX_STATIC_BYTES).

    The message gives the sizes and what to change; nothing is compiled to find out.
    """
    parts = {"the buffer": buffer_elements * itemsize, "the initial parameters":
             n_params * itemsize, "the training data": data_bytes}
    total = sum(parts.values())
    if total > MAX_STATIC_BYTES:
        sizes = ", ".join(f"{what} {size:,}" for what, size in parts.items() if size)
        raise ValueError(
            f"codegen: the program would hold {total:,} bytes of static data ({sizes}), more "
            f"than the {MAX_STATIC_BYTES:,} that a C program can link with the usual code "
            f"model (\"relocation truncated to fit\"); the buffer holds every layer's output "
            f"for batch_size={batch_size} rows: use a smaller batch_size, float32, or a "
            "smaller model")


class BufferSize(NamedTuple):
    """The size of the program's one static buffer, in elements and in bytes."""

    elements: int
    bytes: int


@dataclass
class CProgram:
    """A network's training step as C source: what :func:`compile_training_step` returns.

    Attributes
    ----------
    name : str
        The prefix of every public C name (``net_init``, ``net_train_step``, ``NET_BATCH``).
    source : str
        The ``<name>.c`` file: the buffer, the initial parameters and all functions.
    header : str
        The ``<name>.h`` file: sizes, parameter offsets and the function prototypes.
    layout : dict[str, Region]
        Every array in the buffer: name -> ``Region(offset, shape)``, in memory order. The
        parameters keep their names from ``model.named_parameters()`` (``"0.weight"``); the
        other arrays are ``"grad/<param>"``, ``"momentum/<param>"``, ``"act/<layer path>"``
        (a layer's output) and ``"delta/a"``, ``"delta/b"`` (gradients flowing back).
    buffer_size : BufferSize
        ``(elements, bytes)`` of the buffer: all the memory the network needs.
    dtype : str
        ``"float64"`` (C ``double``) or ``"float32"`` (C ``float``).
    batch_size : int
        The most rows one call takes (``<NAME>_BATCH``); any batch from 1 to it works.
    input_shape : tuple of int
        The shape of one input sample (``(2,)``, or ``(1, 32, 32)`` for images).
    n_in, n_out : int
        Numbers in one input sample (flattened) and outputs of a sample.
    loss : str
        ``"cross_entropy"`` or ``"mse"``.
    param_names : list[str]
        The parameters in buffer order (the order of ``model.named_parameters()``).
    notes : dict[str, str]
        What each array of the layout is for.
    """

    name: str
    source: str
    header: str
    layout: dict[str, Region]
    buffer_size: BufferSize
    dtype: str
    batch_size: int
    input_shape: tuple[int, ...]
    n_in: int
    n_out: int
    loss: str
    param_names: list[str]
    notes: dict[str, str] = field(default_factory=dict, repr=False)

    @property
    def c_type(self) -> str:
        """``"double"`` or ``"float"``."""
        return c_float(self.dtype).name

    @property
    def n_params(self) -> int:
        """Numbers in all parameters together."""
        return sum(self.layout[p].size for p in self.param_names)

    def memory_map(self) -> str:
        """The layout as a table: offset, size, shape, name and purpose of every array."""
        table = BufferLayout()
        for name, region in self.layout.items():
            table.add(name, region.shape, self.notes.get(name, ""))
        return "\n".join(table.table())

    def write(self, directory: str | Path) -> tuple[Path, Path]:
        """Write ``<name>.c`` and ``<name>.h`` into ``directory`` (made if missing).

        Returns
        -------
        (Path, Path)
            The paths of the source and the header.
        """
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        c_path, h_path = directory / f"{self.name}.c", directory / f"{self.name}.h"
        c_path.write_text(self.source)
        h_path.write_text(self.header)
        return c_path, h_path

    def __repr__(self) -> str:
        return (f"CProgram(name={self.name!r}, dtype={self.dtype!r}, loss={self.loss!r}, "
                f"batch_size={self.batch_size}, n_in={self.n_in}, n_out={self.n_out}, "
                f"buffer_size={self.buffer_size})")


# ---------------------------------------------------------------------------------------------
# Reading the model


def _layers_of(model: nn.Module) -> list[tuple[str, nn.Module]]:
    """The model's layers in the order they run, with their paths, Sequentials opened."""
    return [(path, layer) for path, layer, _ in _walk.layers(model, _LAYER_TYPES, _refusal)]


def _refusal(path: str, module: nn.Module, base: type[Any] | None) -> UnsupportedModuleError:
    kind = type(module).__name__
    where = f"at '{path}' (model.{path})" if path else "(the model itself)"
    attention = (nn.MultiheadAttention, nn.TransformerEncoderLayer)
    hint = (" Attention (MultiheadAttention, TransformerEncoderLayer, and models built on "
            "them, such as examples/char_gpt.py's GPT) has no C translation: export such a "
            "model to ONNX instead (minigrad.export.onnx)."
            if any(isinstance(m, attention) for m in module.modules()) else "")
    if base is not None:
        return UnsupportedModuleError(
            f"codegen: cannot compile the {kind} {where}: it is a subclass of "
            f"{base.__name__} with its own forward(), which the C generator cannot "
            f"read. It supports {SUPPORTED}.{hint}")
    return UnsupportedModuleError(
        f"codegen: cannot compile the {kind} {where}. The C generator supports {SUPPORTED}; "
        f"remove the {kind} or replace it with one of those.{hint}")


def _c_ident(text: str) -> str:
    """A C identifier from a name: ``"1.0.weight"`` -> ``"1_0_WEIGHT"`` (uppercase)."""
    return re.sub(r"[^0-9A-Za-z]", "_", text).upper()


def _fmt_shape(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


@dataclass
class _Plan:
    """Everything decided about the program before any C is written."""

    t: CFloat
    layers: list[CLayer]
    loss: CLoss
    layout: BufferLayout
    macros: dict[str, str]          # region name -> C macro naming it
    params: list[tuple[str, np.ndarray]]
    input_shape: tuple[int, ...]
    n_in: int
    momentum: float
    weight_decay: float
    deltas: tuple[str, ...]


def _input_shape(found: list[tuple[str, nn.Module]],
                 input_shape: tuple[int, ...] | None) -> tuple[int, ...]:
    """The shape of one input sample: given, or read off a first Linear layer."""
    if input_shape is not None:
        shape = tuple(input_shape) if isinstance(input_shape, (tuple, list)) else (input_shape,)
        if not shape or not all(isinstance(d, int) and d >= 1 for d in shape):
            raise ValueError(f"codegen: input_shape must be the positive sizes of one sample, "
                             f"e.g. (2,) or (1, 32, 32); got {input_shape!r}")
        return shape
    for path, module in found:
        if isinstance(module, nn.Linear):
            return (module.in_features,)
        if not isinstance(module, (nn.ReLU, nn.LeakyReLU, nn.Sigmoid, nn.Tanh)):
            raise ValueError(f"codegen: the model starts with a {type(module).__name__} (at "
                             f"'{path}'), so the input's shape is not known: pass input_shape, "
                             "the shape of one sample, e.g. input_shape=(1, 32, 32)")
    raise ValueError(f"codegen: the model has no Linear or Conv2d layer, so nothing to train; "
                     f"expected {SUPPORTED}")


def _layer(path: str, module: nn.Module, shape: tuple[int, ...],
           macros: dict[str, str], name_of: dict[int, str]) -> CLayer:
    """The CLayer of one module, given the shape of its input sample (checked here)."""
    title, kind = repr(module), type(module).__name__
    where = f"the {kind} at '{path}'" if path else f"the {kind}"

    def params() -> dict[str, Any]:  # the C names of a Linear's or Conv2d's arrays
        weight, bias = getattr(module, "weight"), getattr(module, "bias")
        w = name_of[id(weight)]
        b = name_of[id(bias)] if bias is not None else None
        return {"weight": macros[w], "bias": macros[b] if b else None,
                "grad_weight": macros[f"grad/{w}"], "grad_bias": macros[f"grad/{b}"] if b else None}

    if isinstance(module, nn.Linear):
        if len(shape) != 1:
            raise ValueError(f"codegen: {where} needs samples of shape (features,), but the "
                             f"layer before it gives shape {shape}; add nn.Flatten() before it")
        if module.in_features != shape[0]:
            raise ValueError(f"codegen: {where} takes {module.in_features} features, but the "
                             f"layer before it gives {shape[0]}")
        return CLinear(path, title, shape, (module.out_features,), **params())
    if isinstance(module, nn.Conv2d) and (module.groups != 1 or module.dilation != (1, 1)):
        raise UnsupportedModuleError(
            f"codegen: cannot compile {where}: groups={module.groups}, dilation="
            f"{module.dilation}; the C generator supports only groups=1 and dilation=1")
    if isinstance(module, nn.MaxPool2d) and module.padding not in (0, (0, 0)):
        raise UnsupportedModuleError(
            f"codegen: cannot compile {where}: padding={module.padding}; the C generator "
            "supports only MaxPool2d without padding")
    if isinstance(module, (nn.Conv2d, nn.MaxPool2d)):
        if len(shape) != 3:
            raise ValueError(f"codegen: {where} needs samples of shape (C, H, W); it gets "
                             f"shape {shape}")
        c, h, w = shape
        kh, kw = pair(module.kernel_size, kind, "kernel_size", low=1)
        sh, sw = pair(module.stride, kind, "stride", low=1)
        ph, pw = pair(module.padding, kind, "padding") if isinstance(module, nn.Conv2d) else (0, 0)
        if kh > h + 2 * ph or kw > w + 2 * pw:
            raise ValueError(f"codegen: {where} has {kh}x{kw} windows, larger than its "
                             f"{h}x{w} input (with padding {ph}, {pw})")
        oh, ow = (h + 2 * ph - kh) // sh + 1, (w + 2 * pw - kw) // sw + 1
        if isinstance(module, nn.MaxPool2d):
            return CMaxPool2d(path, title, shape, (c, oh, ow), kernel=(kh, kw), stride=(sh, sw))
        if module.in_channels != c:
            raise ValueError(f"codegen: {where} takes {module.in_channels} channels, but the "
                             f"layer before it gives {c} (samples of shape {shape})")
        return CConv2d(path, title, shape, (module.out_channels, oh, ow), kernel=(kh, kw),
                       stride=(sh, sw), padding=(ph, pw), **params())
    if isinstance(module, nn.Flatten):
        if module.start_dim != 1 or module.end_dim not in (-1, len(shape)):
            raise UnsupportedModuleError(
                f"codegen: {where} flattens axes {module.start_dim} to {module.end_dim}; the "
                "C generator supports only nn.Flatten() (all axes after the batch)")
        return CFlatten(path, title, shape, (math.prod(shape),))
    slope = float(module.negative_slope) if isinstance(module, nn.LeakyReLU) else 0.0
    return CElementwise(path, title, shape, shape, kind=kind, slope=slope)


def _plan(model: nn.Module, loss: str, batch_size: int, momentum: float,
          weight_decay: float, t: CFloat, input_shape: tuple[int, ...] | None) -> _Plan:
    """Read the model and decide everything before any C is written: the layers in order
    (their shapes checked), the region of every array in the one buffer and its C macro."""
    found = _layers_of(model)
    _check_not_shared(found)
    shape = _input_shape(found, input_shape)
    if not any(isinstance(m, (nn.Linear, nn.Conv2d)) for _, m in found):
        raise ValueError(f"codegen: the model has no Linear or Conv2d layer, so nothing to "
                         f"train; expected {SUPPORTED}")
    named = _trained_parameters(model, found)
    name_of = {id(p): name for name, p in named}
    regions = _Regions()
    params = [(name, backend.to_numpy(p.data)) for name, p in named]
    _place_parameters(regions, params, momentum)
    layers, out_shape = _place_layers(regions, found, shape, batch_size, name_of)
    deltas = _place_deltas(regions, layers, batch_size)
    return _Plan(t, layers, CLoss(loss, out_shape[0]), regions.layout, regions.macros, params,
                 shape, math.prod(shape), momentum, weight_decay, deltas)


def _check_not_shared(found: list[tuple[str, nn.Module]]) -> None:
    """Refuse a layer object met at two places of the model."""
    seen: dict[int, str] = {}
    for path, module in found:
        if id(module) in seen:
            raise UnsupportedModuleError(
                f"codegen: the same {type(module).__name__} object is used twice, at "
                f"'{seen[id(module)]}' and at '{path}'; shared layers are not supported "
                "(build a separate layer for each place)")
        seen[id(module)] = path


def _trained_parameters(model: nn.Module,
                        found: list[tuple[str, nn.Module]]) -> list[tuple[str, nn.Parameter]]:
    """The model's named parameters (their names and order are the model's own), refusing
    any that belongs to no Linear or Conv2d that runs."""
    named = list(model.named_parameters())
    owned = set()
    for _, module in found:
        if isinstance(module, (nn.Linear, nn.Conv2d)):
            owned.add(id(module.weight))
            if module.bias is not None:
                owned.add(id(module.bias))
    stray = [name for name, p in named if id(p) not in owned]
    if stray:
        raise UnsupportedModuleError(
            f"codegen: parameters {stray} belong to no layer that runs in forward(), so the "
            "C program could not train them; expected only the parameters of the layers")
    return named


@dataclass
class _Regions:
    """The buffer's layout as it is decided, and the C macro that names each region."""

    layout: BufferLayout = field(default_factory=BufferLayout)
    macros: dict[str, str] = field(default_factory=dict)  # region name -> C macro

    def add(self, name: str, macro: str, shape: tuple[int, ...], note: str) -> str:
        """Give the array ``name`` its region, named ``macro`` in the C (unique)."""
        if macro in self.macros.values():
            raise ValueError(f"codegen: two arrays would share the C name {macro}; rename "
                             f"the modules so that their paths differ in more than "
                             "punctuation")
        self.layout.add(name, shape, note)
        self.macros[name] = macro
        return macro


def _place_parameters(regions: _Regions, params: list[tuple[str, np.ndarray]],
                      momentum: float) -> None:
    """The parameters, then their gradients, then (with momentum) their momenta: each kind
    one block in the model's order."""
    for name, value in params:
        regions.add(name, "PARAM_" + _c_ident(name), value.shape, "parameter")
    for name, value in params:
        regions.add(f"grad/{name}", "GRAD_" + _c_ident(name), value.shape, f"gradient of {name}")
    if momentum:
        for name, value in params:
            regions.add(f"momentum/{name}", "MOMENTUM_" + _c_ident(name), value.shape,
                        f"momentum of {name}")


def _place_layers(regions: _Regions, found: list[tuple[str, nn.Module]],
                  shape: tuple[int, ...], batch_size: int,
                  name_of: dict[int, str]) -> tuple[list[CLayer], tuple[int, ...]]:
    """The layers, their shapes checked from one to the next, each output given a region
    (or another's memory); with the shape of one output sample."""
    layers: list[CLayer] = []
    for path, module in found:
        layer = _layer(path, module, shape, regions.macros, name_of)
        shape = layer.out_shape
        kind, label = type(module).__name__, path or "output"
        before = layers[-1] if layers else None
        if isinstance(layer, CFlatten):
            layer.output = before.output if before else "x"  # the same memory, a new shape
        elif (isinstance(layer, CElementwise) and before is not None
              and not isinstance(before, (CElementwise, CFlatten))
              and not ELEMENTWISE[kind].needs_input):
            # Nothing reads the output of the layer before but this activation (that layer's
            # backward needs only its input), and this activation's backward needs only its
            # own output: so it overwrites the layer's output, and saves an array.
            layer.output, layer.in_place = before.output, True
            act = next(name for name, macro in regions.macros.items() if macro == before.output)
            regions.layout.notes[act] += f", then of {kind} '{label}' (in place)"
        else:
            layer.output = regions.add(f"act/{label}", "ACT_" + _c_ident(label),
                                       (batch_size, *shape), f"output of {kind} '{label}'")
        layers.append(layer)
    if len(shape) != 1:
        raise ValueError(f"codegen: the network must end with samples of shape (outputs,); "
                         f"it ends with shape {shape}: add nn.Flatten() and a Linear layer")
    return layers, shape


def _place_deltas(regions: _Regions, layers: list[CLayer], batch_size: int) -> tuple[str, ...]:
    """Gradients flowing back: two arrays take turns (a Linear reads one and writes the
    other; an activation works in place), as large as the largest gradient they hold."""
    first_param = min(i for i, layer in enumerate(layers) if layer.has_params)
    largest = max(layer.out_size for layer in layers[first_param:])
    deltas: tuple[str, ...] = ("DELTA_A",)
    regions.add("delta/a", "DELTA_A", (batch_size, largest), "gradient flowing back (1 of 2)")
    if any(layer.dx_apart for layer in layers[first_param + 1:]):
        regions.add("delta/b", "DELTA_B", (batch_size, largest), "gradient flowing back (2 of 2)")
        deltas += ("DELTA_B",)
    return deltas


# ---------------------------------------------------------------------------------------------
# Writing the C


def _indent(lines: list[str], level: int = 1) -> list[str]:
    pad = "    " * level
    return [pad + line if line else line for line in lines]


def _function(signature: str, body: list[str], comment: str = "") -> list[str]:
    """A C function definition, with a comment line above it."""
    head = [f"/* {comment} */"] if comment else []
    return head + [signature, "{"] + _indent(body) + ["}", ""]


def _uses(name: str, lines: list[str]) -> bool:
    """Whether C ``lines`` use the identifier ``name`` outside comments."""
    code = re.sub(r"/\*.*?\*/", "", "\n".join(lines), flags=re.S)
    return re.search(rf"\b{name}\b", code) is not None


def _values(values: np.ndarray, t: CFloat) -> list[str]:
    """Numbers as C literals, as many to a line as fit in 92 characters, each followed by a
    comma."""
    return _pack([t.literal(v) for v in np.asarray(values).ravel()])


def _pack(items: list[str], width: int = 92) -> list[str]:
    lines, line = [], ""
    for item in items:
        if line and len(line) + len(item) + 2 > width:
            lines.append(line.rstrip())
            line = ""
        line += item + ", "
    return lines + [line.rstrip()] if line else lines


def _forward_pass(plan: _Plan) -> list[str]:
    body: list[str] = []
    x = "x"
    for layer in plan.layers:
        body += layer.forward(plan.t, x) + [""]
        x = layer.output
    return body[:-1]


def _backward_pass(plan: _Plan) -> list[str]:
    """The layers in reverse, from the loss's gradient (in DELTA_A) back to the first layer
    with parameters: nothing before it needs a gradient."""
    first_param = min(i for i, layer in enumerate(plan.layers) if layer.has_params)
    inputs = ["x"] + [layer.output for layer in plan.layers[:-1]]
    g, other = "DELTA_A", "DELTA_B"
    body: list[str] = []
    for i in range(len(plan.layers) - 1, first_param - 1, -1):
        layer = plan.layers[i]
        if layer.dx_apart:
            dx = other if i > first_param else None  # the input's gradient, if anyone needs it
            body += layer.backward(plan.t, inputs[i], g, dx) + [""]
            if dx is not None:
                g, other = other, g
        else:  # an activation (in place) or Flatten (nothing to do)
            body += layer.backward(plan.t, inputs[i], g, g) + [""]
    body = body[:-1]
    if not _uses("x", body):
        body = ["(void)x;  /* not needed: the layers before the first Linear or Conv2d */",
                ""] + body
    return body


def _sgd_update(plan: _Plan, n_params: int, name: str) -> list[str]:
    T = plan.t.name
    lines = []
    if plan.momentum:
        rule = "v = momentum * v + g;  p -= lr * v"
        if plan.weight_decay:
            rule = "g += weight_decay * p;  " + rule
        lines += [
            f"/* SGD with momentum, for all {n_params} parameters at once:",
            f" *   {rule}",
            f" * The momentum v starts at 0 ({name}_init), so the first step is v = g, as in",
            " * minigrad.optim.SGD and PyTorch. */",
            "for (long j = 0; j < N_PARAMS; ++j) {",
            f"    const {T} g = GRADS[j]"
            + (" + WEIGHT_DECAY * PARAMS[j];" if plan.weight_decay else ";"),
            "    MOMENTUM[j] = MOMENTUM_FACTOR * MOMENTUM[j] + g;",
            "    PARAMS[j] -= LR * MOMENTUM[j];",
            "}",
        ]
    else:
        rule = "p -= lr * (g + weight_decay * p)" if plan.weight_decay else "p -= lr * g"
        lines += [
            f"/* SGD, for all {n_params} parameters at once:  {rule} */",
            "for (long j = 0; j < N_PARAMS; ++j)",
            "    PARAMS[j] -= LR * "
            + ("(GRADS[j] + WEIGHT_DECAY * PARAMS[j]);" if plan.weight_decay else "GRADS[j];"),
        ]
    return lines


def compile_training_step(model: nn.Module, *, loss: str = "cross_entropy", batch_size: int,
                          lr: float, momentum: float = 0.0, weight_decay: float = 0.0,
                          dtype: str | None = None, name: str = "net",
                          input_shape: tuple[int, ...] | None = None,
                          train_data: tuple[Any, Any] | None = None,
                          epochs: int = 100) -> CProgram:
    """Write a network's whole training step as one self-contained C99 file.

    Long because this docstring is the reference of the C file and of every parameter: the
    code itself is about 20 lines.

    The C file holds ONE static array, ``buf``, with every parameter, gradient, momentum,
    activation and scratch array at an offset fixed now; it never allocates memory. It
    defines, with ``T`` the C type (``double`` or ``float``)::

        void <name>_init(void);                        /* the model's current parameters */
        int  <name>_forward(const T *x, T *out, int n);
        T    <name>_train_step(const T *x, const int *y, int n);    /* cross_entropy */
        T    <name>_train_step(const T *x, const T *target, int n); /* mse */
        void <name>_get_params(T *dst);
        void <name>_set_params(const T *src);
        T   *<name>_buffer(void);                      /* the whole buffer; see .layout */

    ``x`` holds ``n`` samples (1 <= n <= batch_size) of ``n_in`` numbers each (an image
    (C, H, W) flattened, for a convolutional network), one after another. A
    training step is the forward pass, the loss, the backward pass and one SGD update, with
    the same formulas as minigrad's engine and ``minigrad.optim.SGD``: the C program and the
    engine, from the same start and on the same batches, take the same steps (to rounding).
    ``<name>_train_step`` returns the batch's loss (before the update), or NaN if ``n`` or a
    label is out of range (then nothing changes); ``<name>_forward`` returns 0, or -1 for a
    bad ``n``. Call ``<name>_init()`` once before anything else.

    With ``-DMINIGRAD_MAIN`` the file also has a ``main()`` that trains on ``train_data``
    (compiled in) or, without it, on rows read from standard input, and prints the loss of
    every epoch.

    Parameters
    ----------
    model : nn.Module
        A ``Sequential`` (nested ones too) of ``Linear``, ``Conv2d``, ``MaxPool2d``,
        ``Flatten`` (all axes after the batch), ``ReLU``, ``LeakyReLU``, ``Sigmoid`` and
        ``Tanh``; or one of those alone. Its current parameters become the initial values.
    loss : {"cross_entropy", "mse"}
        Softmax cross-entropy on the outputs as logits, against integer labels (fused and
        stable, as ``functional.cross_entropy``), or the mean squared error against targets
        shaped like the output.
    batch_size : int
        The largest batch a call takes (the buffer is sized for it).
    lr, momentum, weight_decay : float
        SGD's settings (``minigrad.optim.SGD``, no dampening or Nesterov). They become
        macros (``LR``, ...) that ``-D<NAME>_LR=...`` at build time overrides.
    dtype : {"float64", "float32"}, optional
        The C type: ``double`` or ``float``. By default the dtype of the model's parameters.
    name : str
        Prefix of the C names and of the files (a C identifier).
    input_shape : tuple of int, optional
        The shape of one input sample, e.g. ``(1, 32, 32)``. Needed when the model starts
        with a convolution; otherwise it is ``(in_features,)`` of the first Linear.
    train_data : (X, y), optional
        The data ``main()`` trains on, compiled in as literals: ``X`` (N, n_in) or
        ``(N, *input_shape)``, and ``y`` (N,) labels (cross-entropy) or (N, n_out) targets (MSE).
    epochs : int
        Epochs ``main()`` trains for (``-D<NAME>_EPOCHS=...`` overrides).

    Returns
    -------
    CProgram
        ``.source``, ``.header``, ``.layout``, ``.buffer_size``; ``.write(dir)`` saves them.

    Raises
    ------
    UnsupportedModuleError
        For a module the generator cannot write, naming it and its path in the model.
    ValueError
        For settings out of range, layers whose sizes do not fit together, and a program
        too large to link (more than :data:`MAX_STATIC_BYTES` of static data).

    Example
    -------
    >>> from minigrad import nn
    >>> model = nn.Sequential(nn.Linear(2, 16, seed=0), nn.ReLU(), nn.Linear(16, 2, seed=1))
    >>> program = compile_training_step(model, batch_size=32, lr=0.1)
    >>> program.buffer_size
    BufferSize(elements=1764, bytes=14112)
    >>> program.layout["2.weight"]
    Region(offset=48, shape=(2, 16))
    """
    _check_settings(model, loss, batch_size, lr, momentum, weight_decay, epochs, name)
    t = c_float(_default_dtype(model) if dtype is None else dtype)
    plan = _plan(model, loss, batch_size, float(momentum), float(weight_decay), t,
                 input_shape)
    n_out = plan.loss.n_out
    if loss == "cross_entropy" and n_out < 2:
        raise ValueError(f"compile_training_step: cross-entropy needs at least 2 outputs "
                         f"(classes); the model gives {n_out}")
    data = _check_train_data(train_data, loss, plan.input_shape, n_out, t)
    n_params = sum(value.size for _, value in plan.params)
    check_linkable(plan.layout.size, n_params, t.itemsize, batch_size,
                   data_bytes=0 if data is None else data[0].nbytes + data[1].nbytes)
    regions = dict(plan.layout.regions)
    source = _source(plan, name, batch_size, float(lr), data, epochs, model)
    header = _header(plan, name, batch_size)
    return CProgram(name=name, source=source, header=header, layout=regions,
                    buffer_size=BufferSize(plan.layout.size, plan.layout.size * t.itemsize),
                    dtype=t.dtype, batch_size=batch_size, input_shape=plan.input_shape,
                    n_in=plan.n_in, n_out=n_out, loss=loss,
                    param_names=[n for n, _ in plan.params],
                    notes=dict(plan.layout.notes))


def _check_settings(model: nn.Module, loss: str, batch_size: int, lr: float, momentum: float,
                    weight_decay: float, epochs: int, name: str) -> None:
    """Refuse, with the argument's name and value, what compile_training_step cannot use."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"compile_training_step: expected a minigrad nn.Module; got "
                        f"{type(model).__name__}")
    if loss not in LOSSES:
        raise ValueError(f"compile_training_step: loss must be one of {LOSSES}; got {loss!r}")
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
        raise ValueError(f"compile_training_step: batch_size must be a positive int; got "
                         f"{batch_size!r}")
    for label, value in (("lr", lr), ("momentum", momentum), ("weight_decay", weight_decay)):
        if not isinstance(value, (int, float)) or not value >= 0:
            raise ValueError(f"compile_training_step: {label} must be a number >= 0; got "
                             f"{value!r}")
    if not isinstance(epochs, int) or epochs < 1:
        raise ValueError(f"compile_training_step: epochs must be a positive int; got "
                         f"{epochs!r}")
    if (not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name)
            or name in _C_KEYWORDS or keyword.iskeyword(name)):
        raise ValueError(f"compile_training_step: name must be a C identifier (letters, "
                         f"digits, _), not a keyword; got {name!r}")


def _default_dtype(model: nn.Module) -> str:
    """The dtype of the model's parameters, or float64 when they differ."""
    dtypes = {str(p.data.dtype) for p in model.parameters()}
    return dtypes.pop() if len(dtypes) == 1 else "float64"


def _check_train_data(train_data: Any, loss: str, input_shape: tuple[int, ...], n_out: int,
                      t: CFloat) -> tuple[np.ndarray, np.ndarray] | None:
    if train_data is None:
        return None
    try:
        X, y = train_data
    except (TypeError, ValueError):
        raise ValueError("compile_training_step: train_data must be a pair (X, y)") from None
    X = np.asarray(backend.to_numpy(X), dtype=t.dtype)
    y = np.asarray(backend.to_numpy(y))
    n_in = math.prod(input_shape)
    if X.ndim == 1 + len(input_shape) and X.shape[1:] == input_shape:
        X = X.reshape(len(X), n_in)
    if X.ndim != 2 or X.shape[1] != n_in or len(X) < 1:
        shapes = f"(N, {n_in})" + (f" or (N, {', '.join(map(str, input_shape))})"
                                   if len(input_shape) > 1 else "")
        raise ValueError(f"compile_training_step: train_data X must have shape {shapes}; "
                         f"got {X.shape}")
    if loss == "cross_entropy":
        if y.shape != (len(X),) or not np.issubdtype(y.dtype, np.integer):
            raise ValueError(f"compile_training_step: train_data y must be {len(X)} integer "
                             f"labels, shape ({len(X)},); got shape {y.shape}, dtype {y.dtype}")
        if y.min() < 0 or y.max() >= n_out:
            raise ValueError(f"compile_training_step: labels must be in 0..{n_out - 1}; got "
                             f"{y.min()}..{y.max()}")
    elif y.shape != (len(X), n_out):
        raise ValueError(f"compile_training_step: train_data targets must have shape "
                         f"({len(X)}, {n_out}) for the MSE loss; got {y.shape}")
    else:
        y = y.astype(t.dtype)
    return X, y


def _header(plan: _Plan, name: str, batch_size: int) -> str:
    N, T = name.upper(), plan.t.name
    layout = plan.layout
    n_params = sum(layout[p].size for p, _ in plan.params)
    target = plan.loss.target_param(plan.t)
    param_lines = [f"#define {N}_OFFSET_{_c_ident(p)} {layout[p].offset}  /* {p} "
                   f"{_fmt_shape(layout[p].shape)} */" for p, _ in plan.params]
    lines = [
        f"/* {name}.h: the training step of a network, compiled to C99 by minigrad.export.c.",
        " *",
        f" * All the state is one static array of {N}_BUF_SIZE {T} values inside {name}.c;",
        " * nothing is allocated at run time. Arrays are row-major, one row per sample. */",
        f"#ifndef {N}_H",
        f"#define {N}_H",
        "",
        f"#define {N}_BATCH {batch_size}  /* the most rows one call takes */",
        f"#define {N}_IN {plan.n_in}  /* numbers in one input sample"
        + (f", an image {_fmt_shape(plan.input_shape)} flattened" if len(plan.input_shape) > 1
           else "") + " */",
        f"#define {N}_OUT {plan.loss.n_out}  /* outputs of one row"
        + (" (class scores)" if plan.loss.kind == "cross_entropy" else "") + " */",
        f"#define {N}_N_PARAMS {n_params}  /* numbers in all parameters, from offset 0 */",
        f"#define {N}_BUF_SIZE {layout.size}  /* elements of the buffer */",
        f"#define {N}_BUF_BYTES {layout.size * plan.t.itemsize}  /* its size in bytes */",
        "",
        "/* Where each parameter starts in the buffer (see <name>_buffer()). */",
        *param_lines,
        "",
        "/* Set the parameters to the model's values at generation time, all else to 0.",
        " * Call it once before anything else; again to start training over. */",
        f"void {name}_init(void);",
        "",
        f"/* Predict: x holds n rows of {N}_IN values, out gets n rows of {N}_OUT.",
        f" * 1 <= n <= {N}_BATCH. Returns 0, or -1 (nothing done) if n is out of range. */",
        f"int {name}_forward(const {T} *x, {T} *out, int n);",
        "",
        "/* One step of training on a batch of n rows: forward, loss, backward, SGD update.",
        " * Returns the batch's mean loss before the update; NaN (and changes nothing) if n",
        " * is out of range" + (" or a label is not in 0.." + f"{N}_OUT-1" if
                                plan.loss.kind == "cross_entropy" else "") + ". */",
        f"{T} {name}_train_step(const {T} *x, {target}, int n);",
        "",
        f"/* Copy all {N}_N_PARAMS parameter values out of / into the buffer, in the order",
        " * of the model's named_parameters(). */",
        f"void {name}_get_params({T} *dst);",
        f"void {name}_set_params(const {T} *src);",
        "",
        f"/* The buffer itself, {N}_BUF_SIZE values: parameters, gradients, activations. */",
        f"{T} *{name}_buffer(void);",
        "",
        f"#endif /* {N}_H */",
        "",
    ]
    return "\n".join(lines)


def _source(plan: _Plan, name: str, batch_size: int, lr: float,
            data: tuple[np.ndarray, np.ndarray] | None, epochs: int, model: nn.Module) -> str:
    """The ``.c`` file: its head comment and settings, the buffer and its memory map, the
    functions, and the optional demo ``main()``."""
    out = _source_head(plan, name, batch_size, lr, model)
    out += _buffer_and_map(plan, name)
    out += _source_functions(plan, name)
    out += harness(plan.loss.kind, name, plan.t, data, epochs)
    return "\n".join(out)


def _source_head(plan: _Plan, name: str, batch_size: int, lr: float,
                 model: nn.Module) -> list[str]:
    """The comment that says what the file holds (the network, the loss, the memory map, how
    to build it), the includes and the optimizer's settings as macros."""
    N, t = name.upper(), plan.t
    T = t.name
    layout = plan.layout
    loss_name = {"cross_entropy": "softmax cross-entropy", "mse": "mean squared error"}
    sgd = f"SGD, lr {lr:g}" + (f", momentum {plan.momentum:g}" if plan.momentum else "") + (
        f", weight decay {plan.weight_decay:g}" if plan.weight_decay else "")
    out: list[str] = [
        f"/* {name}.c: a network's training step in plain C99, written by minigrad.export.c.",
        " *",
        " * The network (minigrad):",
        *[" *   " + line for line in repr(model).splitlines()],
        f" * Loss: {loss_name[plan.loss.kind]}.  Optimizer: {sgd}.",
        f" * Batches of 1 to {batch_size} rows of {plan.n_in} features; {T} throughout.",
        " *",
        f" * All the numbers live in ONE static array, buf[{layout.size}] ({layout.size} x "
        f"{t.itemsize} = {layout.size * t.itemsize} bytes),",
        " * each array at an offset fixed at generation time; nothing is allocated at run",
        " * time. Arrays are row-major, one row per sample: element [r][j] of an array with",
        " * f columns is at r * f + j. The memory map:",
        " *",
        *[" *   " + line for line in layout.table()],
        " *",
        f" * Build:  cc -std=c99 -O2 -c {name}.c",
        f" * Demo:   cc -std=c99 -O2 -DMINIGRAD_MAIN {name}.c -o {name} -lm && ./{name}",
        " */",
        f'#include "{name}.h"',
        "",
        "#include <math.h>",
        "#include <string.h>",
        "",
        "/* The optimizer's settings; override them at build time, e.g. -D"
        f"{N}_LR=0.01. */",
        f"#ifndef {N}_LR",
        f"#define {N}_LR {t.literal(lr)}",
        "#endif",
        f"#define LR (({T}){N}_LR)",
    ]
    if plan.momentum:
        out += [f"#ifndef {N}_MOMENTUM", f"#define {N}_MOMENTUM {t.literal(plan.momentum)}",
                "#endif", f"#define MOMENTUM_FACTOR (({T}){N}_MOMENTUM)"]
    if plan.weight_decay:
        out += [f"#ifndef {N}_WEIGHT_DECAY",
                f"#define {N}_WEIGHT_DECAY {t.literal(plan.weight_decay)}", "#endif",
                f"#define WEIGHT_DECAY (({T}){N}_WEIGHT_DECAY)"]
    return out


def _buffer_and_map(plan: _Plan, name: str) -> list[str]:
    """The one buffer, a macro for each array's place in it, the blocks of parameters,
    gradients and momenta, and the initial parameters."""
    N, t = name.upper(), plan.t
    layout, macros = plan.layout, plan.macros
    out = [
        "",
        "/* The one buffer: every number of the network. */",
        f"static {t.name} buf[{N}_BUF_SIZE];",
        "",
        "/* The memory map: each array's place in buf. */",
    ]
    width = max(len(m) for m in macros.values())
    place = max(len(f"(buf + {layout[name].offset})") for name in macros)
    for region_name, macro in macros.items():
        r = layout[region_name]
        out.append(f"#define {macro:<{width}} {f'(buf + {r.offset})':<{place}}  /* "
                   f"{region_name} {_fmt_shape(r.shape)} */")
    first_param = plan.params[0][0]
    out += [
        "/* The parameters, their gradients" + (" and momenta" if plan.momentum else "")
        + ", each as one block in the same order: */",
        f"#define N_PARAMS {N}_N_PARAMS",
        f"#define PARAMS (buf + {layout[first_param].offset})",
        f"#define GRADS (buf + {layout['grad/' + first_param].offset})",
    ]
    if plan.momentum:
        out.append(f"#define MOMENTUM (buf + {layout['momentum/' + first_param].offset})")
    out += ["", "/* The initial parameters: the model's values when this file was written. */",
            f"static const {t.name} initial_params[{N}_N_PARAMS] = {{"]
    for p, value in plan.params:
        out.append(f"    /* {p} {_fmt_shape(value.shape)} */")
        out += _indent(_values(value, t))
    out += ["};", ""]
    return out


def _source_functions(plan: _Plan, name: str) -> list[str]:
    """The C functions: init, the passes, the loss, the update, and the public entry points
    (which check ``n`` and the labels before they touch the buffer)."""
    N, t = name.upper(), plan.t
    T = t.name
    n_params = sum(plan.layout[p].size for p, _ in plan.params)
    last = plan.layers[-1].output
    out = _function(f"void {name}_init(void)", [
        f"for (long j = 0; j < {N}_BUF_SIZE; ++j)",
        f"    buf[j] = {t.literal(0)};",
        "memcpy(PARAMS, initial_params, sizeof initial_params);",
    ], "Everything to 0 (gradients, momentum, activations), then the initial parameters.")
    out += _function(f"static void forward_pass(const {T} *x, int n)", _forward_pass(plan),
                     f"The forward pass of n rows of x (n, {plan.n_in}); the output ends "
                     f"in {last}.")
    out += _function(f"static {T} loss_and_gradient({plan.loss.target_param(t)}, int n)",
                     plan.loss.body(t, last, "DELTA_A"),
                     "The loss of the output, and its gradient into DELTA_A.")
    out += _function(f"static void backward_pass(const {T} *x, int n)", _backward_pass(plan),
                     "The backward pass: each layer's VJP, last layer first, filling the "
                     "gradients of the parameters.")
    out += _function("static void sgd_update(void)", _sgd_update(plan, n_params, name),
                     "One step of the optimizer.")
    out += _function(f"int {name}_forward(const {T} *x, {T} *out, int n)", [
        f"if (n < 1 || n > {N}_BATCH)",
        "    return -1;",
        "forward_pass(x, n);",
        f"memcpy(out, {last}, sizeof({T}) * (size_t)n * {N}_OUT);",
        "return 0;",
    ], "Predict n rows.")
    checks = [f"if (n < 1 || n > {N}_BATCH)", "    return NAN;"]
    if plan.loss.kind == "cross_entropy":
        checks += ["for (int r = 0; r < n; ++r)  /* a bad label would index past the logits */",
                   f"    if (y[r] < 0 || y[r] >= {N}_OUT)",
                   "        return NAN;"]
    tgt = plan.loss.target_arg
    out += _function(
        f"{T} {name}_train_step(const {T} *x, {plan.loss.target_param(t)}, int n)", checks + [
            "forward_pass(x, n);",
            f"const {T} loss = loss_and_gradient({tgt}, n);",
            "backward_pass(x, n);",
            "sgd_update();",
            "return loss;",
        ], "One training step on n rows: forward, loss, backward, update.")
    out += _function(f"void {name}_get_params({T} *dst)",
                     [f"memcpy(dst, PARAMS, sizeof({T}) * {N}_N_PARAMS);"])
    out += _function(f"void {name}_set_params(const {T} *src)",
                     [f"memcpy(PARAMS, src, sizeof({T}) * {N}_N_PARAMS);"])
    out += _function(f"{T} *{name}_buffer(void)", ["return buf;"])
    return out
